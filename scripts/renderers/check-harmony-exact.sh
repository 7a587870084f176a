#!/usr/bin/env bash
# check-harmony-exact.sh — proves `probe | compose --live | send --exact`
# for gpt-oss under vLLM's Harmony renderer against the real openai_harmony
# (scripts/renderers/harmony-ref.py --count): for every --cache-bust target,
# --isl 64, 300 and 2000, with and without a shared system prompt, every
# request send --exact sent (first and later turns, sized against the test
# server's real replies) counts exactly its target_isl with the reference,
# and the test server (serving Harmony too) reported that count; a turn
# compose marks unreachable (--isl 64 is below Harmony's system message)
# counts exactly the expected_isl its record promises. Both endpoints:
# chat completions and Responses (vLLM's Responses path under Harmony,
# harmony-ref.py's transcription of it); ENDPOINTS picks (default "chat
# responses").
#
#   scripts/renderers/check-harmony-exact.sh [MODEL_DIR]
#
# MODEL_DIR defaults to the gptoss conformance model (no config.json, hence
# --renderer harmony). Needs python3 with scripts/renderers/requirements.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
model=${1:-}
if [[ -z $model ]]; then
  # The conformance tree the Go tests unpack (testutil.RefDir).
  model=$(ls -d "${TMPDIR:-/tmp}"/islkit-conformance-*/models/gptoss 2>/dev/null | head -1)
fi
[[ -f $model/tokenizer.json ]] || { echo "no gptoss model folder: give MODEL_DIR (or run go test ./internal/serverprofile/ once to unpack it)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill "$(cat "$tmp/ts.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/" ./cmd/probe ./cmd/compose ./cmd/send ./cmd/islkit-testserver)
now=2026-01-02
port=$((20000 + RANDOM % 20000))
"$tmp/islkit-testserver" -tokenizer "$model" -renderer harmony -addr 127.0.0.1:$port >"$tmp/ts.log" 2>&1 &
echo $! >"$tmp/ts.pid"
sleep 3
fail=0 n=0
for ep in ${ENDPOINTS:-chat responses}; do
for target in none system_prefix system_suffix first_turn_prefix first_turn_suffix; do
  "$tmp/probe" --tokenizer "$model" --apply-chat-template --renderer harmony --now ${now}T00:00:00 --cache-bust $target --endpoint "$ep" >"$tmp/probe.json"
  for isl in 64 300 2000 sys; do
    args=(--isl "$isl" --conversations 2 --turns 3 --osl 16 --seed 1 --live)
    [[ $isl == sys ]] && args=(--isl 1000 --conversations 2 --turns 3 --osl 16 --seed 1 --live --shared-system-prompt-length 200)
    if ! "$tmp/compose" --probe "$tmp/probe.json" "${args[@]}" >"$tmp/convs.jsonl" 2>"$tmp/err"; then
      echo "$ep $target isl=$isl: compose refused: $(cat "$tmp/err")"; continue
    fi
    "$tmp/send" --url http://127.0.0.1:$port --model gpt-oss --exact --now ${now}T00:00:00 --endpoint "$ep" <"$tmp/convs.jsonl" >"$tmp/sent.jsonl" 2>"$tmp/send.err"
    VLLM_SYSTEM_START_DATE=$now python3 "$root/scripts/renderers/harmony-ref.py" --count "$model" <"$tmp/sent.jsonl" >"$tmp/ref.txt"
    if ! out=$(python3 - "$tmp/sent.jsonl" "$tmp/ref.txt" "$target" "$isl" <<'PY'
import json, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if "payload" in r]  # send's run record aside
ref = [int(x) for x in open(sys.argv[2])]
bad = 0
for r, c in zip(recs, ref):
    server = (r.get("result") or {}).get("usage", {}).get("prompt_tokens")
    # An unreachable turn (the template and history alone exceed a small
    # target) promises expected_isl instead, which must still be exact.
    want = r["target_isl"] if "unreachable" not in r else r.get("expected_isl")
    if c != want or r.get("expected_isl") != want or (server is not None and server != c):
        bad += 1
        print(f'{sys.argv[3]} isl={sys.argv[4]} {r["conversation_id"]} turn {r["turn"]}: target {r["target_isl"]}, openai_harmony {c}, server {server}')
print(f"{len(recs)} requests exact ({sum('unreachable' in r for r in recs)} unreachable, at their expected_isl)")
sys.exit(1 if bad or len(recs) != len(ref) else 0)
PY
    ); then fail=1; fi
    echo "$ep $target isl=$isl: $out" | tail -1
    n=$((n + 1))
  done
done
done
[[ $fail == 0 ]] && echo "OK: $n runs, every request exact against openai_harmony" || { echo FAIL; exit 1; }
