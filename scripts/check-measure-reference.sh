#!/usr/bin/env bash
# check-measure-reference.sh — checks measure's templated count against the
# reference (testdata/conformance/oracle: Python Jinja2 rendering as transformers does,
# then the Rust HuggingFace tokenizers) on the payloads of an end-to-end dry
# run, for every reference model and every cache-bust
# target: probe | compose | send --dry-run | measure --apply-chat-template,
# then each payload's messages rendered by wire_ref.py and counted by
# tokenize_ref.cjs must give measure's "isl.templated", and compose's
# exact-mode "expected_isl" for the request.
#
# Needs python3-jinja2 and node with @anush008/tokenizers@0.6.0 (see
# ARCHITECTURE.md); NODE_PATH defaults to .bench/oracle/node_modules
# (`make oracle` installs it).
set -euo pipefail
TOOLS="probe compose send measure" source "$(dirname "$0")/reference-env.sh" "$@"
bad=0 total=0
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  for target in none first_turn_prefix first_turn_suffix system_prefix system_suffix system_prefix+sys; do
    sys=()
    if [[ $target == *+sys ]]; then
      # Mistral v0.1's template refuses system messages (compose says so).
      [[ $model == mistral7b* ]] && continue
      target=${target%+sys} sys=(--shared-system-prompt-length 50)
    fi
    "$tmp/probe" --tokenizer "$dir" --apply-chat-template --cache-bust "$target" \
      | "$tmp/compose" --isl 300 --osl 40 --conversations 2 --turns 2 --seed 3 --benchmark-id 4c28fa599f5b --model "$model" "${sys[@]}" \
      | "$tmp/send" --dry-run \
      | "$tmp/measure" --tokenizer "$dir" --apply-chat-template >"$tmp/measured.jsonl"
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(json.dumps({"messages": r["payload"]["messages"], "templated": r["isl"]["templated"],
                      "expected": r.get("expected_isl")}))
' "$tmp/measured.jsonl" >"$tmp/requests.jsonl"
    python3 "$oracle/wire_ref.py" "$dir" <"$tmp/requests.jsonl" \
      | node "$oracle/tokenize_ref.cjs" "$dir/tokenizer.json" >"$tmp/reference.jsonl"
    read -r n miss < <(python3 -c '
import json, sys
n = miss = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    n += 1
    # measure must count what the reference counts, and (exact compose)
    # that is the wire ISL compose promised for the dry-run request.
    if r.get("error") or r["tokens"] != r["templated"] or r["expected"] not in (None, r["tokens"]):
        miss += 1
        print("  mismatch:", r.get("error") or "reference %d, measure %d, compose expected %s" % (r["tokens"], r["templated"], r["expected"]), file=sys.stderr)
print(n, miss)
' "$tmp/reference.jsonl")
    total=$((total + n)); bad=$((bad + miss))
    printf '%-22s %-18s %-8s %3d requests, %d differ\n' "$model" "$target" "${sys:+system}" "$n" "$miss"
  done
done
echo "measure vs reference: $((total - bad))/$total payloads identical"
[ "$bad" -eq 0 ]
