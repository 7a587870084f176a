#!/usr/bin/env bash
# check-prefix-groups-reference.sh — proves `compose --prefix-groups` against
# the reference renderer and tokenizer (testdata/conformance/oracle: Python
# Jinja2 as transformers renders, and the Rust HuggingFace tokenizers).
#
# For every reference model and cache-bust targets none and
# first_turn_suffix it composes 7 conversations of 2 turns at --isl 600 in
# 3 groups with --prefix-length 200, runs send --dry-run, encodes every
# payload with the reference and checks, from the reference ids alone:
#   * every request counts exactly its target_isl;
#   * the first 200 token ids of the first requests of one group are
#     identical, and those of different groups differ.
#
#   scripts/check-prefix-groups-reference.sh            check
#   scripts/check-prefix-groups-reference.sh --update   also rewrite
#       internal/compose/testdata/prefix_groups_reference.jsonl.gz (what the
#       Go test TestPrefixGroupsReference reads)
#
# Needs python3-jinja2 and node with @anush008/tokenizers@0.6.0; NODE_PATH
# defaults to .bench/oracle/node_modules (`make oracle`), else /tmp/oracle/node_modules.
set -euo pipefail

source "$(dirname "$0")/reference-env.sh" "$@"

out=$tmp/prefix_groups_reference.jsonl
: >"$out"
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  for target in none first_turn_suffix; do
    "$tmp/probe" --tokenizer "$dir" --apply-chat-template --cache-bust "$target" >"$tmp/probe.json"
    "$tmp/compose" --probe "$tmp/probe.json" --isl 600 --osl 16 --conversations 7 --turns 2 --seed 1 --benchmark-id 00833c935699 \
      --prefix-groups 3 --prefix-length 200 --model m >"$tmp/convs.jsonl"
    "$tmp/send" --dry-run <"$tmp/convs.jsonl" >"$tmp/reqs.jsonl"
    python3 - "$tmp/convs.jsonl" "$tmp/reqs.jsonl" "$model" "$target" >"$tmp/msgs.jsonl" <<'PY'
import hashlib, json, sys
groups = {c["id"]: c["prefix_group"] for c in map(json.loads, open(sys.argv[1]))}
for r in map(json.loads, open(sys.argv[2])):
    msgs = r["payload"]["messages"]
    h = hashlib.sha256("".join(x["role"] + "\0" + x["content"] + "\0" for x in msgs).encode()).hexdigest()
    print(json.dumps({"model": sys.argv[3], "target": sys.argv[4], "conv": r["conversation_index"], "turn": r["turn"],
                      "group": groups[r["conversation_id"]], "target_isl": r["target_isl"], "messages": msgs, "messages_sha256": h}))
PY
    python3 "$oracle/wire_ref.py" "$dir" <"$tmp/msgs.jsonl" | node "$oracle/tokenize_ref.cjs" "$dir/tokenizer.json" \
      | python3 -c '
import hashlib, json, sys
for r in map(json.loads, sys.stdin):
    keep = {k: r[k] for k in ("model", "target", "conv", "turn", "group", "target_isl", "messages_sha256")}
    if "error" in r:
        keep["error"] = r["error"]
    else:
        keep["ref_tokens"] = r["tokens"]
        keep["prefix_sha256"] = hashlib.sha256(",".join(map(str, r["ids"][:200])).encode()).hexdigest()[:16]
    print(json.dumps(keep))' >>"$out"
  done
done

fail=0
python3 - "$out" <<'PY' || fail=1
import collections, json, sys
cases = collections.OrderedDict()
for r in map(json.loads, open(sys.argv[1])):
    cases.setdefault((r["model"], r["target"]), []).append(r)
bad = 0
for (model, target), rs in cases.items():
    msgs = []
    for r in rs:
        if "error" in r:
            msgs.append(f"conv {r['conv']} turn {r['turn']}: reference failed: {r['error']}")
        elif r["ref_tokens"] != r["target_isl"]:
            msgs.append(f"conv {r['conv']} turn {r['turn']}: reference {r['ref_tokens']} != target {r['target_isl']}")
    first = [r for r in rs if r["turn"] == 0 and "error" not in r]
    by = collections.defaultdict(set)
    for r in first:
        by[r["group"]].add(r["prefix_sha256"])
    for g, s in by.items():
        if len(s) != 1:
            msgs.append(f"group {g}: {len(s)} different prefixes")
    heads = [next(iter(s)) for s in by.values()]
    if len(set(heads)) != len(heads):
        msgs.append("two groups share a prefix")
    print(("ok   " if not msgs else "FAIL ") + f"{model:20s} {target:18s} {len(rs)} requests exact, {len(by)} groups, one prefix each"
          + ("" if not msgs else " :: " + "; ".join(msgs)))
    bad += bool(msgs)
print(f"{len(cases) - bad}/{len(cases)} cases ok")
sys.exit(1 if bad else 0)
PY

if [[ $update == 1 ]]; then
  gzip -9n <"$out" >"$root/internal/compose/testdata/prefix_groups_reference.jsonl.gz"
  echo "wrote internal/compose/testdata/prefix_groups_reference.jsonl.gz"
fi
exit $fail
