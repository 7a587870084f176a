#!/usr/bin/env bash
# check-osl-reference.sh — proves send --exact-osl and measure's output-length
# check against an independent server (scripts/osl-reference-server.py:
# Python standard library HTTP, the real HuggingFace tokenizers, vLLM's and
# SGLang's parameter names; not the project's test server), for --server
# vllm and sglang:
#   1. send (--exact-osl on by default): every request's completion_tokens
#      is its max_tokens;
#   2. send --exact-osl=false | measure: the model stops when it likes, and
#      every record's isl.osl is what the server logged for that body: its
#      length, and its cause (eos → stopped_early, max_tokens → exact);
#   3. against the server started with --ignore-min-tokens: measure's
#      summary flags the run.
#
# Needs Python with the tokenizers pin of
# testdata/conformance/oracle/requirements.txt; REF_PYTHON names it
# (default /tmp/islkit-ref/bin/python when it exists, else python3).
set -euo pipefail

TOOLS="probe compose send measure" source "$(dirname "$0")/reference-env.sh" "$@"

py=${REF_PYTHON:-python3}
[[ -z ${REF_PYTHON:-} && -x /tmp/islkit-ref/bin/python ]] && py=/tmp/islkit-ref/bin/python
model=$shared/models/qwen3
pid=
stop_server() { if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap 'stop_server; rm -rf "$tmp"' EXIT

# start_server LOG ARGS...: runs the reference server logging to LOG; sets
# url and pid.
start_server() {
  local log=$1
  shift
  : >"$log"
  : >"$tmp/server.out"
  "$py" "$root/scripts/osl-reference-server.py" --tokenizer "$model/tokenizer.json" --log "$log" "$@" >"$tmp/server.out" &
  pid=$!
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$tmp/server.out")
    [[ -n $url ]] && return
    sleep 0.1
  done
  echo "reference server did not start" >&2
  exit 1
}

"$tmp/probe" --apply-chat-template --cache-bust first_turn_prefix --tokenizer "$model" \
  | "$tmp/compose" --tokenizer "$model" --isl 100 --osl 24 --conversations 4 --turns 3 --seed 1 --model m >"$tmp/convs.jsonl"

fail=0
for server in vllm sglang; do
  start_server "$tmp/exact.log" --server "$server"
  "$tmp/send" --url "$url" --server "$server" --concurrency 4 "$tmp/convs.jsonl" >"$tmp/exact.jsonl"
  stop_server
  start_server "$tmp/free.log" --server "$server"
  "$tmp/send" --url "$url" --server "$server" --exact-osl=false --concurrency 4 "$tmp/convs.jsonl" \
    | "$tmp/measure" --tokenizer "$model" >"$tmp/measured.jsonl"
  stop_server
  start_server "$tmp/ignored.log" --server "$server" --ignore-min-tokens
  "$tmp/send" --url "$url" --server "$server" --concurrency 4 "$tmp/convs.jsonl" 2>/dev/null \
    | "$tmp/measure" --tokenizer "$model" --summary-json "$tmp/ignored.json" >/dev/null
  stop_server
  "$py" - "$server" "$tmp" "$root/scripts/osl-reference-server.py" <<'PY' || fail=1
import importlib.util, json, sys
server, tmp, refpath = sys.argv[1:]
spec = importlib.util.spec_from_file_location("ref", refpath)
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)

def records(path):
    return [r for r in map(json.loads, open(path)) if r.get("kind") == "islkit.request"]

bad = 0
exact = records(f"{tmp}/exact.jsonl")
for r in exact:
    got = r["result"]["usage"]["completion_tokens"]
    if got != r["max_tokens"] or r["output_length"]["mode"] != "exact":
        print(f"{server} exact-osl: {r['conversation_id']} turn {r['turn']}: {got} tokens, max_tokens {r['max_tokens']}, {r['output_length']}")
        bad += 1
logged = {e["key"]: e for e in map(json.loads, open(f"{tmp}/free.log"))}
want = {"eos": "stopped_early", "max_tokens": "exact"}
measured = records(f"{tmp}/measured.jsonl")
misses = 0
for r in measured:
    e = logged.get(ref.body_key(r["payload"]))
    o = r["isl"].get("osl")
    if e is None or o is None or o["cause"] != want[e["why"]] or o["received"] != e["tokens"] or o.get("finish_reason") != e["finish_reason"]:
        print(f"{server} free: {r['conversation_id']} turn {r['turn']}: server logged {e}, measure says {o}")
        bad += 1
    elif e["why"] != "max_tokens":
        misses += 1
summary = json.load(open(f"{tmp}/ignored.json"))
warning = (summary.get("osl") or {}).get("warning", "")
if "the server ignored those parameters" not in warning:
    print(f"{server} ignored min_tokens: not flagged: {summary.get('osl')}")
    bad += 1
reenc = [r["isl"]["osl"].get("reencoded_diff") for r in measured]
print(f"{server}: {len(exact)} requests exact with --exact-osl; {len(measured)} without, {misses} stopped early, each cause as logged; "
      f"re-encoded − server: {min(d for d in reenc if d is not None)}..{max(d for d in reenc if d is not None)}; ignoring server flagged")
sys.exit(1 if bad or not exact or not measured or not misses else 0)
PY
done
exit $fail
