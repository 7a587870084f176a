#!/usr/bin/env bash
# A small concurrency sweep against islkit-testserver, as send records on
# stdout: probe | compose | send --url at each of STAGES (concurrency
# levels, default "1 2 4"), every request marked with its stage
# ({"index": i, "concurrency": c}, records.Request.Stage). With a send
# that has --stages, one run of send --stages (a warmup per stage);
# otherwise one send per stage, each composed afresh (its own benchmark
# id, so its markers are new), the stage written into its records. The
# server serves CAPACITY requests at once (the others queue: TTFT rises
# past that level), streams at TOKENS_PER_SECOND after a TTFT, fails FAULT_RATE
# of the requests (500s and truncated streams), so the stream has failed
# rows and error kinds; WARMUP warmup requests come first. Used by
# scripts/notebook-check.sh; cmd/measure/testdata/sweep.jsonl.gz was
# recorded with it (a send without --stages, a server without
# -max-concurrency).
#
#   BIN=bin scripts/export-sweep.sh > sweep.jsonl
set -euo pipefail
BIN=${BIN:-bin}
STAGES=${STAGES:-1 2 4}
CONVERSATIONS=${CONVERSATIONS:-12}
TOKENS_PER_SECOND=${TOKENS_PER_SECOND:-2000}
FAULT_RATE=${FAULT_RATE:-0.1}
WARMUP=${WARMUP:-2} # warmup requests: of each stage with send --stages, else of the first
CAPACITY=${CAPACITY:-2} # the test server's -max-concurrency: the curve's knee
PORT=${PORT:-$((20000 + RANDOM % 20000))}

"$BIN/islkit-testserver" -addr "127.0.0.1:$PORT" -ttft 5ms -tokens-per-second "$TOKENS_PER_SECOND" -max-concurrency "$CAPACITY" \
  -fault-rate "$FAULT_RATE" -faults 500,truncate -seed 3 -random-stop -prefix-cache-block 16 >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.05
done

probe=$(mktemp)
trap 'kill "$server" 2>/dev/null || true; rm -f "$probe"' EXIT
"$BIN/probe" --apply-chat-template --cache-bust first_turn_prefix --now 2025-07-10T12:00:00 >"$probe"
if "$BIN/send" --help 2>&1 | grep -q -- '--stages='; then
  # send runs the stages itself (send --stages: each stage with its own
  # warmup, every record marked with its stage).
  levels=$(echo $STAGES | tr ' ' ',')
  "$BIN/compose" --isl 200 --osl 24 --conversations "$CONVERSATIONS" --turns 2 --seed 1 --model m <"$probe" \
    | { "$BIN/send" --url "http://127.0.0.1:$PORT" --stages "concurrency:$levels" --stage-requests "$((CONVERSATIONS * 2))" \
          --warmup "$WARMUP" || [ $? -eq 1 ]; }
  exit 0
fi
# A send without --stages: one send per stage, its records (and metric
# samples) marked with the stage here.
index=0
for c in $STAGES; do
  # send exits 1 when requests failed, as some do here by design.
  "$BIN/compose" --isl 200 --osl 24 --conversations "$CONVERSATIONS" --turns 2 --seed "$((index + 1))" --model m <"$probe" \
    | { "$BIN/send" --url "http://127.0.0.1:$PORT" --concurrency "$c" --warmup "$([ "$index" = 0 ] && echo "$WARMUP" || echo 0)" || [ $? -eq 1 ]; } \
    | STAGE="{\"index\":$index,\"concurrency\":$c}" python3 -c '
import json, os, sys
stage = json.loads(os.environ["STAGE"])
for line in sys.stdin:
    rec = json.loads(line)
    if rec.get("kind") in ("islkit.request", "islkit.metrics"):
        rec["stage"] = stage
    sys.stdout.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
'
  index=$((index + 1))
done
