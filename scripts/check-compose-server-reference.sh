#!/usr/bin/env bash
# check-compose-server-reference.sh — proves `probe | compose --server sglang
# --dataset | send --dry-run` against an independent reference of SGLang's
# prompt count (testdata/conformance/oracle/sglang_ref.py: the rules of
# docs/reference/server-preprocessing.md §5 in Python, rendering through
# Python Jinja2 as transformers does and counting with the Python
# HuggingFace tokenizers).
#
# The dataset, internal/compose/testdata/openai_tools.jsonl, is OpenAI
# messages with text parts, null content, tool calls and results, tools,
# names, reasoning and final assistant turns (and one dialog whose
# tool-call arguments are not JSON, which SGLang refuses). For every
# reference model, the cache-bust targets none, first_turn_prefix and
# system_suffix, texts kept (--isl 0) and resized (--isl 200), it composes
# the dataset for --server sglang, writes the dry run, counts each payload
# with the reference and checks that it equals compose's count (the
# record's expected_isl) and the turn's target_isl (unless compose marked
# it unreachable: then the reference counts more).
#
#   scripts/check-compose-server-reference.sh            check
#   scripts/check-compose-server-reference.sh --update   also rewrite
#       internal/compose/testdata/server-reference.jsonl.gz (what the Go test
#       TestServerDatasetReference reads)
#
# Needs Python with the pins of testdata/conformance/oracle/requirements.txt:
#   python3 -m venv /tmp/islkit-ref && /tmp/islkit-ref/bin/pip install -r testdata/conformance/oracle/requirements.txt
# REF_PYTHON names that interpreter (default /tmp/islkit-ref/bin/python when
# it exists, else python3).
set -euo pipefail

source "$(dirname "$0")/reference-env.sh" "$@"

py=${REF_PYTHON:-python3}
[[ -z ${REF_PYTHON:-} && -x /tmp/islkit-ref/bin/python ]] && py=/tmp/islkit-ref/bin/python
dataset=$root/internal/compose/testdata/openai_tools.jsonl
out=$tmp/reference.jsonl
: >"$out"
fail=0
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  for target in none first_turn_prefix system_suffix; do
    "$tmp/probe" --tokenizer "$dir" --apply-chat-template --cache-bust "$target" >"$tmp/probe.json"
    for isl in 0 200; do
      args=(--dataset "$dataset" --server sglang --seed 1 --benchmark-id 00833c935699 --model ref)
      [[ $isl != 0 ]] && args+=(--isl "$isl")
      label="{\"model\":\"$model\",\"target\":\"$target\",\"isl\":$isl"
      "$tmp/compose" --probe "$tmp/probe.json" "${args[@]}" >"$tmp/convs.jsonl" 2>"$tmp/err"
      "$tmp/send" --dry-run --exact-osl=false "$tmp/convs.jsonl" >"$tmp/dry.jsonl"
      "$py" "$oracle/sglang_ref.py" "$dir" <"$tmp/dry.jsonl" >"$tmp/counts.txt"
      python3 - "$tmp/convs.jsonl" "$tmp/dry.jsonl" "$tmp/counts.txt" "$label" >>"$out" <<'PY'
import hashlib, json, sys
convs = {c["id"]: c for c in map(json.loads, open(sys.argv[1]))}
dry = [json.loads(l) for l in open(sys.argv[2])]
counts = [l.rstrip("\n") for l in open(sys.argv[3])]
assert len(dry) == len(counts), (len(dry), len(counts))
label = json.loads(sys.argv[4] + "}")
for r, n in zip(dry, counts):
    t = convs[r["conversation_id"]]["turns"][r["turn"]]
    # The payload re-serialised compactly with sorted keys, as the Go
    # test hashes its own dry run.
    h = hashlib.sha256(json.dumps(r["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    row = dict(label, conv=r["conversation_index"], turn=r["turn"], server=r.get("server"),
               payload_sha256=h, target_isl=r["target_isl"], expected_isl=r.get("expected_isl"),
               unreachable=t.get("unreachable") is not None)
    if n.startswith("error"):
        row["error"] = n
    else:
        row["ref_tokens"] = int(n)
    print(json.dumps(row))
PY
    done
  done
done

# Judge: one line per model x target x isl; fail on any mismatch.
python3 - "$out" <<'PY' || fail=1
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
cases = collections.OrderedDict()
for r in rows:
    cases.setdefault((r["model"], r["target"], r["isl"]), []).append(r)
bad = 0
for (model, target, isl), rs in cases.items():
    msgs = []
    for r in rs:
        where = f"conv {r['conv']} turn {r['turn']}"
        if r["server"] != "sglang":
            msgs.append(f"{where}: record server {r['server']}")
        if "error" in r:
            msgs.append(f"{where}: reference: {r['error']}")
            continue
        ref = r["ref_tokens"]
        if ref != r["expected_isl"]:
            msgs.append(f"{where}: reference {ref} != compose {r['expected_isl']}")
        if not r["unreachable"] and ref != r["target_isl"]:
            msgs.append(f"{where}: reference {ref} != target {r['target_isl']}")
        if r["unreachable"] and not ref > r["target_isl"]:
            msgs.append(f"{where}: unreachable but the reference counts {ref} <= target {r['target_isl']}")
    convs = sorted({r["conv"] for r in rs})
    print(("ok   " if not msgs else "FAIL ") + f"{model:20s} {target:18s} isl={isl:<4d} {len(rs)} requests of conversations {convs}" + ("" if not msgs else " :: " + "; ".join(msgs)))
    bad += bool(msgs)
print(f"{len(cases) - bad}/{len(cases)} cases ok")
sys.exit(1 if bad else 0)
PY

if [[ $update == 1 ]]; then
  gzip -9n <"$out" >"$root/internal/compose/testdata/server-reference.jsonl.gz"
  echo "wrote internal/compose/testdata/server-reference.jsonl.gz"
fi
exit $fail
