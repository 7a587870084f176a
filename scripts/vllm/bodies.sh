#!/usr/bin/env bash
# bodies.sh BIN REF OUT — every request kind islkit makes or measures, as
# JSONL cases {"model", "source", "case", "body"} for scripts/vllm/count.py:
#   golden-wire     the conformance wire cases (REF/golden/wire), as chat bodies
#   serverprofile   internal/serverprofile/testdata/cases.jsonl (content parts,
#                   null content, tool calls, reasoning, continue_final_message)
#   endpoints       internal/measure/testdata/endpoints/bodies.jsonl.gz
#                   (completions and Responses bodies)
#   compose-*       probe | compose | send --dry-run payloads: synthetic chat
#                   (prefix and system-suffix markers, a shared system prompt),
#                   completions, Responses, a ShareGPT dataset, a Mooncake
#                   trace and prefix groups
# for every reference model in REF/models. The clock is pinned (ISLKIT_NOW).
set -euo pipefail
bin=$1 ref=$2 out=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
td=$root/internal/compose/testdata
export ISLKIT_NOW=${ISLKIT_NOW:-2025-07-10T12:00:00}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$out"

# payloads MODEL SOURCE < send records: one case per dry-run payload.
payloads() {
  python3 -c '
import json, sys
model, source = sys.argv[1], sys.argv[2]
for r in map(json.loads, sys.stdin):
    case = "conv%s-turn%s" % (r.get("conversation_index"), r.get("turn"))
    print(json.dumps({"model": model, "source": source, "case": case, "body": r["payload"]}, ensure_ascii=False))
' "$1" "$2" >>"$out"
}

for dir in "$ref"/models/*/; do
  model=$(basename "$dir")
  # golden wire: the wire cases are what transformers renders, where a tool
  # call's arguments may be a dict; an OpenAI client sends them as a JSON
  # string (vLLM refuses a dict), which vLLM parses back before rendering.
  python3 - "$ref/golden/wire/$model.jsonl" "$model" >>"$out" <<'PY'
import json, sys
for w in map(json.loads, open(sys.argv[1])):
    body = {"model": "m", "messages": w["messages"], "add_generation_prompt": w["add_generation_prompt"]}
    if w.get("tools"):
        body["tools"] = w["tools"]
    for m in body["messages"]:
        for call in m.get("tool_calls") or []:
            f = call.get("function") or {}
            if isinstance(f.get("arguments"), dict):
                f["arguments"] = json.dumps(f["arguments"])
    print(json.dumps({"model": sys.argv[2], "source": "golden-wire", "case": w["case"], "body": body}, ensure_ascii=False))
PY
  python3 - "$root/internal/serverprofile/testdata/cases.jsonl" "$model" >>"$out" <<'PY'
import json, sys
for c in map(json.loads, open(sys.argv[1])):
    print(json.dumps({"model": sys.argv[2], "source": "serverprofile", "case": c["case"], "body": c["body"]}, ensure_ascii=False))
PY
  python3 - "$root/internal/measure/testdata/endpoints/bodies.jsonl.gz" "$model" >>"$out" <<'PY'
import gzip, json, sys
for c in map(json.loads, gzip.open(sys.argv[1], "rt", encoding="utf-8")):
    print(json.dumps({"model": sys.argv[2], "source": "endpoints", "case": "%s/%d" % (c["case"], c["isl"]), "body": c["body"]}, ensure_ascii=False))
PY
  sys=(--shared-system-prompt-length 60)
  [[ $model == mistral7b* ]] && sys=()  # Mistral v0.1's template refuses a system message
  for target in first_turn_prefix system_suffix; do
    args=()
    [[ $target == system_suffix ]] && args=("${sys[@]}")
    [[ $target == system_suffix && ${#sys[@]} == 0 ]] && continue
    "$bin/probe" --tokenizer "$dir" --apply-chat-template --cache-bust "$target" >"$tmp/probe.json"
    "$bin/compose" --probe "$tmp/probe.json" --isl 300 --osl 16 --conversations 2 --turns 3 --seed 1 --model m "${args[@]}" \
      | "$bin/send" --dry-run | payloads "$model" "compose-synthetic-$target"
  done
  "$bin/probe" --tokenizer "$dir" --endpoint completions --cache-bust first_turn_prefix \
    | "$bin/compose" --isl 300 --osl 16 --conversations 2 --turns 1 --seed 1 --model m \
    | "$bin/send" --dry-run | payloads "$model" compose-completions
  "$bin/probe" --tokenizer "$dir" --endpoint responses --apply-chat-template --cache-bust first_turn_prefix \
    | "$bin/compose" --isl 300 --osl 16 --conversations 2 --turns 2 --seed 1 --model m "${sys[@]}" \
    | "$bin/send" --dry-run | payloads "$model" compose-responses
  "$bin/probe" --tokenizer "$dir" --apply-chat-template --cache-bust first_turn_suffix >"$tmp/probe.json"
  for isl in 0 100; do
    args=()
    [[ $isl == 0 ]] || args=(--isl "$isl")
    "$bin/compose" --probe "$tmp/probe.json" --dataset "$td/sharegpt.json" --seed 1 --model m --osl 16 "${args[@]}" 2>/dev/null \
      | "$bin/send" --dry-run | payloads "$model" "compose-dataset-isl$isl"
  done
  "$bin/compose" --probe "$tmp/probe.json" --trace "$td/trace.jsonl" --block-size 128 --seed 1 --model m 2>/dev/null \
    | "$bin/send" --dry-run | payloads "$model" compose-trace
  "$bin/compose" --probe "$tmp/probe.json" --isl 300 --osl 16 --conversations 4 --turns 2 --seed 1 \
    --prefix-groups 2 --prefix-length 100 --model m \
    | "$bin/send" --dry-run | payloads "$model" compose-prefix-groups
done
python3 -c '
import collections, json, sys
c = collections.Counter(json.loads(l)["source"] for l in open(sys.argv[1]))
print("bodies:", sum(c.values()), dict(c), file=sys.stderr)' "$out"
