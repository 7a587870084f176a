#!/usr/bin/env bash
# Live benchmark of send against the no-tokenize test server, compared in
# the same run with vegeta sending the same bodies at the same concurrency.
#   scripts/bench-send.sh [CONCURRENCY=16] [DURATION=10s]
# Loopback only. vegeta comes from `go run` (not a dependency of the main
# module). Set SEND_MODFILE to build with an alternate go.mod.
set -euo pipefail
command -v jq >/dev/null || { echo "bench-send.sh needs jq (Debian: apt-get install jq)" >&2; exit 1; }
C=${1:-16}
D=${2:-10s}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill ${srv:-} 2>/dev/null || true; rm -rf "$tmp"' EXIT
mod=${SEND_MODFILE:+-modfile=$SEND_MODFILE}
go build $mod -o "$tmp/send" ./cmd/send
go build $mod -o "$tmp/islkit-testserver" ./cmd/islkit-testserver
# go install pkg@version builds outside this module: no go.mod change.
GOBIN="$tmp" go install github.com/tsenart/vegeta/v12@v12.13.0

port=$((20000 + RANDOM % 20000))
url=http://127.0.0.1:$port
"$tmp/islkit-testserver" -addr 127.0.0.1:$port -no-tokenize 2>"$tmp/server.log" &
srv=$!
for _ in $(seq 50); do grep -q listening "$tmp/server.log" && break; sleep 0.1; done

# 200 single-turn conversations, ~1,000-token prompts, 16 output tokens:
# single-turn so both tools send identical bodies.
text=$(printf 'The quick brown fox jumps over the lazy dog. %.0s' $(seq 90))
for i in $(seq 0 199); do
  printf '{"kind":"islkit.conversation","schema_version":1,"id":"b%d","index":%d,"benchmark_id":"bench","cache_bust":"first_turn_prefix","marker_landing":"first_user_turn/prefix","turns":[{"index":0,"target_isl":1000,"text":"%s","bare_tokens":0,"max_tokens":16,"assistant":""}],"exact":false,"model":"bench"}\n' "$i" "$i" "$text"
done >"$tmp/convs.jsonl"

"$tmp/send" --dry-run "$tmp/convs.jsonl" >"$tmp/dry.jsonl"
jq -c --arg u "$url/v1/chat/completions" \
  '{method:"POST", url:$u, body:(.payload|tojson|@base64), header:{"Content-Type":["application/json"]}}' \
  "$tmp/dry.jsonl" >"$tmp/targets.json"

echo "== send: concurrency $C, $D"
"$tmp/send" "$tmp/convs.jsonl" --url "$url" --concurrency "$C" --duration "$D" --recycle \
  --no-payload --progress never --grace 5s >"$tmp/send.jsonl"
jq -s '
  def pct(p): sort | .[((length-1)*p|floor)];
  (map(.result.start_ns) | (max-min)/1e9) as $span |
  { requests: length, errors: map(select(.result.ok|not))|length,
    "req/s": (length/$span*10|round/10),
    latency_ms: { p50: (map(.result.latency_ns)|pct(0.5)/1e6), p99: (map(.result.latency_ns)|pct(0.99)/1e6) } }' "$tmp/send.jsonl"

echo "== vegeta: same bodies, $C workers, $D"
"$tmp/vegeta" attack -targets="$tmp/targets.json" -format=json -rate=0 -workers="$C" -max-workers="$C" \
  -duration="$D" -keepalive=true >"$tmp/vegeta.bin"
"$tmp/vegeta" report -type=json "$tmp/vegeta.bin" | jq '{requests, "req/s": (.throughput*10|round/10),
  errors: (.requests - (.success*.requests|round)), latency_ms: {p50: (.latencies["50th"]/1e6), p99: (.latencies["99th"]/1e6)}}'

echo "== send client overhead (Go benchmark, in-process server)"
go test $mod ./internal/send -run '^$' -bench 'BenchmarkLive|BenchmarkDryRun' -benchtime 3x | grep Benchmark
