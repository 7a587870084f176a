#!/usr/bin/env bash
# check-deepseek-v32-exact.sh — proves `probe | compose --live | send --exact`
# for a deepseek_v32 model under vLLM against DeepSeek's encoder itself
# (scripts/renderers/deepseek-v32-ref.py --count): for every --cache-bust
# target, --isl 300 and 2000, with and without a shared system prompt, every
# request send --exact sent (first and later turns, sized against the test
# server's real replies) counts exactly its target_isl with the reference,
# and the test server reported that count.
#
#   scripts/renderers/check-deepseek-v32-exact.sh ENCODER.py [DEEPSEEK_V3_DIR]
#
# ENCODER.py is vLLM's vllm/tokenizers/deepseek_v32_encoding.py (see
# deepseek-v32-ref.py for the commit); DEEPSEEK_V3_DIR defaults to the
# deepseek_v3 conformance model, from which the V3.2 stand-in is made. Needs
# python3 with scripts/renderers/requirements.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
encoder=${1:?usage: check-deepseek-v32-exact.sh ENCODER.py [DEEPSEEK_V3_DIR]}
base=${2:-$(ls -d "${TMPDIR:-/tmp}"/islkit-conformance-*/models/deepseek_v3 2>/dev/null | head -1)}
[[ -f $base/tokenizer.json ]] || { echo "no deepseek_v3 model folder: give DEEPSEEK_V3_DIR (or run go test ./internal/serverprofile/ once to unpack it)" >&2; exit 2; }
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'kill "$(cat "$tmp/ts.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$tmp"' EXIT
model=$tmp/dsv32
"$py" "$root/scripts/renderers/deepseek-v32-ref.py" --model-dir "$base" "$model"
(cd "$root" && go build -o "$tmp/" ./cmd/probe ./cmd/compose ./cmd/send ./cmd/islkit-testserver)
port=$((20000 + RANDOM % 20000))
"$tmp/islkit-testserver" -tokenizer "$model" -addr 127.0.0.1:$port >"$tmp/ts.log" 2>&1 &
echo $! >"$tmp/ts.pid"
sleep 3
fail=0 n=0
for target in none system_prefix system_suffix first_turn_prefix first_turn_suffix; do
  "$tmp/probe" --tokenizer "$model" --apply-chat-template --cache-bust $target >"$tmp/probe.json"
  for isl in 300 2000 sys; do
    args=(--isl "$isl" --conversations 2 --turns 3 --osl 16 --seed 1 --live)
    [[ $isl == sys ]] && args=(--isl 1000 --conversations 2 --turns 3 --osl 16 --seed 1 --live --shared-system-prompt-length 200)
    if ! "$tmp/compose" --probe "$tmp/probe.json" "${args[@]}" >"$tmp/convs.jsonl" 2>"$tmp/err"; then
      echo "$target isl=$isl: compose refused: $(cat "$tmp/err")"; fail=1; continue
    fi
    "$tmp/send" --url http://127.0.0.1:$port --model deepseek-v3.2 --exact <"$tmp/convs.jsonl" >"$tmp/sent.jsonl" 2>"$tmp/send.err"
    grep '"payload"' "$tmp/sent.jsonl" >"$tmp/reqs.jsonl"
    "$py" "$root/scripts/renderers/deepseek-v32-ref.py" --count "$encoder" "$base" <"$tmp/reqs.jsonl" >"$tmp/ref.txt"
    if ! out=$("$py" - "$tmp/reqs.jsonl" "$tmp/ref.txt" "$target" "$isl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ref = [int(x) for x in open(sys.argv[2])]
bad = 0
for r, c in zip(recs, ref):
    server = (r.get("result") or {}).get("usage", {}).get("prompt_tokens")
    want = r["target_isl"] if "unreachable" not in r else r.get("expected_isl")
    if c != want or r.get("expected_isl") != want or (server is not None and server != c):
        bad += 1
        print(f'{sys.argv[3]} isl={sys.argv[4]} {r["conversation_id"]} turn {r["turn"]}: target {r["target_isl"]}, encoder {c}, server {server}')
print(f"{len(recs)} requests exact ({sum('unreachable' in r for r in recs)} unreachable, at their expected_isl)")
sys.exit(1 if bad or not recs or len(recs) != len(ref) else 0)
PY
    ); then fail=1; fi
    echo "$target isl=$isl: $out" | tail -1
    n=$((n + 1))
  done
done
[[ $fail == 0 ]] && echo "OK: $n runs, every request exact against DeepSeek's encoder" || { echo FAIL; exit 1; }
