#!/usr/bin/env bash
# send across shards on one machine: 1, 2 and 4 send processes (--shard
# I/N, --start-at, as the pods of deploy/kubernetes' Indexed Job) against
# one islkit-testserver, each shard at the same --concurrency, for
# DURATION; the merged records' request throughput (measure's) of 2 and
# 4 shards against 1 shard's in the same repeat, REPEATS times: min /
# median / max. The shards scale up to the cores: the server and every
# shard share them, so on a machine with few cores the ratio says where
# the client stops being the limit, not what N machines would do.
set -euo pipefail
GO=${GO:-go}
REPEATS=${REPEATS:-3}
DURATION=${DURATION:-5s}
CONCURRENCY=${CONCURRENCY:-16}
PORT=${PORT:-18431}
dir=.bench/shards
mkdir -p "$dir/bin"
$GO build -o "$dir/bin/" ./cmd/probe ./cmd/compose ./cmd/send ./cmd/measure ./cmd/islkit-testserver
convs=$dir/convs.jsonl
[ -s "$convs" ] || "$dir/bin/probe" --apply-chat-template --cache-bust first_turn_prefix --now 2025-07-10T12:00:00 \
  | "$dir/bin/compose" --isl 200 --osl 16 --conversations 64 --turns 2 --seed 1 --model m >"$convs"
"$dir/bin/islkit-testserver" -no-tokenize -addr "127.0.0.1:$PORT" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

# run N: N shards started together; prints the merged request throughput.
run() {
  local n=$1 at pids=()
  at=$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%S.%NZ)
  for i in $(seq 0 $((n - 1))); do
    JOB_COMPLETION_INDEX=$i "$dir/bin/send" --url "http://127.0.0.1:$PORT" --shard "env/$n" --start-at "$at" \
      --concurrency "$CONCURRENCY" --recycle --duration "$DURATION" --no-payload "$convs" >"$dir/shard-$n-$i.jsonl" 2>"$dir/shard-$n-$i.err" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  cat "$dir"/shard-"$n"-*.jsonl | "$dir/bin/measure" --summary-json "$dir/summary-$n.json" >/dev/null 2>"$dir/measure-$n.err"
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["performance"]["request_throughput"], s["shards"]["start_skew_ms"] if s.get("shards") else 0)' "$dir/summary-$n.json"
}

r2=() r4=() t1=()
for rep in $(seq "$REPEATS"); do
  read -r one _ < <(run 1)
  read -r two skew2 < <(run 2)
  read -r four skew4 < <(run 4)
  echo "repeat $rep: 1 shard $one req/s, 2 shards $two (skew $skew2 ms), 4 shards $four (skew $skew4 ms)"
  t1+=("$one")
  r2+=("$(python3 -c "print($two / $one)")")
  r4+=("$(python3 -c "print($four / $one)")")
done
stats() { python3 -c 'import sys,statistics as s; v=sorted(map(float,sys.argv[1:])); print("%.2f / %.2f / %.2f" % (v[0], s.median(v), v[-1]))' "$@"; }
echo "cores: $(nproc); per shard --concurrency $CONCURRENCY, --duration $DURATION"
echo "1 shard req/s (min / median / max): $(stats "${t1[@]}")"
echo "2 shards / 1: $(stats "${r2[@]}")"
echo "4 shards / 1: $(stats "${r4[@]}")"
