#!/usr/bin/env bash
# check-endpoints-reference.sh — checks measure --server vllm on
# /v1/completions and /v1/responses bodies against the independent
# reference (testdata/conformance/oracle/endpoint_ref.py + count_ref.cjs:
# vLLM's Responses→messages conversion and completions rules written from
# docs/reference/server-preprocessing.md, Python Jinja2 as transformers
# renders, the Rust HuggingFace tokenizers).
#
# The bodies (internal/measure/testdata/endpoints/bodies.jsonl.gz) are made
# here from the Moby Dick corpus, at about 64, 1000 and 8000 tokens:
# completions prompts as a string (also with add_special_tokens false), a
# list of strings, token ids and a list of token-id lists; Responses input
# as a string (with and without instructions) and as items (instructions
# with text-part messages; a multi-turn history; a tool call and its
# output; a reasoning item; flat function tools, a built-in tool and a
# reasoning effort). For
# every reference model the reference count of every body is checked
# against measure's isl.templated (an error line of the reference — a
# template that refuses the messages — must be a template error in
# measure too).
#
#   scripts/check-endpoints-reference.sh            check
#   scripts/check-endpoints-reference.sh --update   also rewrite the bodies and
#       internal/measure/testdata/endpoints/reference.jsonl.gz (the expected
#       counts TestEndpointsReference and testserver's
#       TestEndpointsReferenceOverHTTP read)
#
# Needs python3-jinja2 and node with @anush008/tokenizers@0.6.0 (see
# ARCHITECTURE.md); NODE_PATH defaults to .bench/oracle/node_modules (`make
# oracle`), else /tmp/oracle/node_modules.
set -euo pipefail
TOOLS="measure" source "$(dirname "$0")/reference-env.sh" "$@"
td=$root/internal/measure/testdata/endpoints
mkdir -p "$td"
if [ "$update" = 1 ]; then
  /usr/bin/python3 - "$root/internal/corpus/mobydick.txt.gz" <<'PY' | gzip -n9 >"$td/bodies.jsonl.gz"
import gzip, json, sys
words = gzip.open(sys.argv[1], "rt", encoding="utf-8").read().split()
pos = [1000]
def text(tokens):
    # about 0.75 words a token for English prose
    n = max(1, int(tokens * 0.75))
    s = " ".join(words[pos[0]:pos[0] + n])
    pos[0] += n
    return s
def ids(n, seed):
    return [(seed * 7919 + k * 104729) % 900 + 100 for k in range(n)]
for isl in (64, 1000, 8000):
    cases = {
        "completions-string": {"prompt": text(isl)},
        "completions-strings": {"prompt": [text(isl // 2), text(isl // 2)]},
        "completions-ids": {"prompt": ids(isl, 1)},
        "completions-id-lists": {"prompt": [ids(isl // 2, 2), ids(isl - isl // 2, 3)]},
        "completions-no-special-tokens": {"prompt": text(isl), "add_special_tokens": False},
        "responses-string": {"input": text(isl)},
        "responses-string-instructions": {"instructions": text(20), "input": text(isl - 20)},
        "responses-items": {"instructions": text(20), "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text(isl // 4)}, {"type": "input_text", "text": text(isl // 4)}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text(isl // 4)}]},
            {"role": "user", "content": text(isl // 4)}]},
        "responses-history": {"input": [
            {"type": "message", "role": "user", "content": text(isl // 5)},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text(isl // 5)}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text(isl // 5)}]},
            {"type": "message", "role": "assistant", "content": text(isl // 5)},
            {"type": "message", "role": "user", "content": text(isl // 5)}]},
        "responses-tool-call": {"instructions": text(20), "input": [
            {"role": "user", "content": text(isl // 3)},
            {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{\"query\":\"whale\",\"limit\":3}"},
            {"type": "function_call_output", "call_id": "call_1", "output": text(isl // 3)},
            {"role": "user", "content": text(isl // 3)}]},
        "responses-reasoning": {"input": [
            {"role": "user", "content": text(isl // 3)},
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": text(isl // 6)}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text(isl // 6)}]},
            {"role": "user", "content": text(isl // 3)}]},
        "responses-tools": {"instructions": text(20), "reasoning": {"effort": "low"}, "tools": [
            {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
            {"type": "function", "name": "count", "description": "Count words.", "parameters": {"type": "object"}, "strict": True},
            {"type": "web_search"}],
         "input": [{"role": "user", "content": text(isl - 20)}]},
    }
    for name, body in cases.items():
        out = {"model": "m"}
        out.update(body)
        out["max_tokens" if "prompt" in body else "max_output_tokens"] = 16
        print(json.dumps({"case": name, "isl": isl, "body": out}, ensure_ascii=False))
PY
fi
zcat "$td/bodies.jsonl.gz" | python3 -c '
import json, sys
for line in sys.stdin:
    print(json.dumps(json.loads(line)["body"], ensure_ascii=False))' >"$tmp/bodies.jsonl"
n=$(wc -l <"$tmp/bodies.jsonl")
: >"$tmp/reference.jsonl"
bad=0
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  /usr/bin/python3 "$oracle/endpoint_ref.py" "$dir" <"$tmp/bodies.jsonl" \
    | node "$oracle/count_ref.cjs" "$dir/tokenizer.json" >"$tmp/counts.txt"
  "$tmp/measure" --tokenizer "$dir" --apply-chat-template --server vllm <"$tmp/bodies.jsonl" >"$tmp/measured.jsonl"
  read -r total miss < <(python3 - "$td/bodies.jsonl.gz" "$tmp/counts.txt" "$tmp/measured.jsonl" "$model" "$tmp/reference.jsonl" <<'PY'
import gzip, json, sys
cases = [json.loads(l) for l in gzip.open(sys.argv[1], "rt", encoding="utf-8")]
counts = open(sys.argv[2]).read().splitlines()
measured = [json.loads(l)["isl"] for l in open(sys.argv[3])]
model, out = sys.argv[4], open(sys.argv[5], "a")
miss = 0
for c, ref, isl in zip(cases, counts, measured, strict=True):
    rec = {"model": model, "case": c["case"], "isl": c["isl"]}
    if ref.startswith("error: "):
        rec["error"] = ref[len("error: "):]
        ok = isl["counted"] == "bare" and "template_error" in isl
    else:
        rec["count"] = int(ref)
        ok = isl["counted"] == "templated" and isl["templated"] == rec["count"]
    if not ok:
        miss += 1
        print("  %s %s/%d: reference %s, measure %s" % (model, c["case"], c["isl"], ref, json.dumps(isl)[:200]), file=sys.stderr)
    out.write(json.dumps(rec) + "\n")
out.close()  # before the answer: the shell reads it without waiting for the exit
print(len(cases), miss)
PY
)
  bad=$((bad + miss))
  printf '%-22s %3d bodies, %d differ\n' "$model" "$total" "$miss"
done
if [ "$update" = 1 ]; then
  gzip -n9 <"$tmp/reference.jsonl" >"$td/reference.jsonl.gz"
  echo "wrote $td/reference.jsonl.gz"
elif ! cmp -s <(zcat "$td/reference.jsonl.gz") "$tmp/reference.jsonl"; then
  echo "the reference differs from the checked-in $td/reference.jsonl.gz:"
  diff <(zcat "$td/reference.jsonl.gz") "$tmp/reference.jsonl" | head -20
  bad=$((bad + 1))
fi
echo "measure vs reference: $bad differences over $n bodies per model"
[ "$bad" -eq 0 ]
