#!/usr/bin/env bash
# check-client-uvicorn.sh — send's HTTP/1.1 client (internal/h1) against
# uvicorn + starlette, the HTTP stack of vLLM and SGLang
# (scripts/uvicorn-chat.py), not only against Go's net/http server:
#   1. 200 streamed requests at concurrency 8: all succeed, over 8
#      connections, none retried;
#   2. 4 requests 6.25 s apart (--rate 0.16), past uvicorn's 5 s keep-alive
#      timeout: each on a new connection, none retried (the idle check);
#   3. 4 streamed requests 1.5 s apart (--rate 0.66), within it: one
#      connection (the idle check must not take an open one for closed);
#   4. 300 non-streamed requests at concurrency 16: all succeed, over 16
#      connections.
# Needs python3-uvicorn and python3-starlette (Debian). Takes about 40 s.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import uvicorn, starlette' 2>/dev/null || { echo "needs python3-uvicorn and python3-starlette (apt-get install python3-uvicorn python3-starlette)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill $srv 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/probe ./cmd/compose ./cmd/send
port=$(( 20000 + RANDOM % 20000 ))
"$PY" scripts/uvicorn-chat.py "$port" 2>"$tmp/server.log" &
srv=$!
url=http://127.0.0.1:$port
for _ in $(seq 50); do curl -sf "$url/conns" >/dev/null && break; sleep 0.2; done
"$tmp/probe" --cache-bust none | "$tmp/compose" --isl 64 --osl 8 --conversations 8 --turns 2 --model m > "$tmp/convs.jsonl"
conns() { curl -sf "$url/conns" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["ports"])'; }
check() { # name records want_connections
  "$PY" - "$1" "$2" "$3" "$(conns)" "$4" <<'PY'
import json, sys
name, path, want, seen, before = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rs = [r for r in map(json.loads, open(path)) if r["kind"] == "islkit.request"]  # not the islkit.run line
ok = sum(r["result"]["ok"] for r in rs)
retried = sum(r["result"].get("retried", False) for r in rs)
new = seen - before
good = ok == len(rs) and retried == 0 and new == want
print(f"{name}: {len(rs)} requests, {ok} ok, {retried} retried, {new} connections (want {want}): {'ok' if good else 'FAIL'}")
sys.exit(0 if good else 1)
PY
}
before=$(conns)
"$tmp/send" --url "$url" --concurrency 8 --requests 200 --recycle < "$tmp/convs.jsonl" > "$tmp/r1.jsonl"
check "streamed, concurrency 8" "$tmp/r1.jsonl" 8 "$before"
before=$(conns)
"$tmp/send" --url "$url" --concurrency 1 --rate 0.16 --requests 4 --recycle < "$tmp/convs.jsonl" > "$tmp/r2.jsonl"
check "idle past the keep-alive timeout" "$tmp/r2.jsonl" 4 "$before"
before=$(conns)
"$tmp/send" --url "$url" --concurrency 1 --rate 0.66 --requests 4 --recycle < "$tmp/convs.jsonl" > "$tmp/r4.jsonl"
check "idle within the keep-alive timeout" "$tmp/r4.jsonl" 1 "$before"
before=$(conns)
"$tmp/send" --url "$url" --concurrency 16 --requests 300 --recycle --no-stream < "$tmp/convs.jsonl" > "$tmp/r3.jsonl"
check "whole bodies, concurrency 16" "$tmp/r3.jsonl" 16 "$before"
