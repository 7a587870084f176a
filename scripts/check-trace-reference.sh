#!/usr/bin/env bash
# check-trace-reference.sh — proves `compose --trace` and `compose --dataset`
# against the reference
# renderer and tokenizer (testdata/conformance/oracle: Python Jinja2 as
# transformers renders, and the Rust HuggingFace tokenizers).
#
# For every reference model, cache-bust targets none and first_turn_suffix,
# and the hand-written traces internal/compose/testdata/trace.jsonl (block
# 128) and trace512.jsonl (block 512) — shared hash-id chains of several
# depths, a row whose last block is one token, a row below the template's
# own cost — it runs compose --trace | send --dry-run, renders and encodes
# every payload with the reference and checks, from the reference ids alone:
#   * every request counts exactly input_length (a row marked unreachable:
#     more, and exactly compose's wire_isl);
#   * two requests whose hash_ids share their first k ids have identical
#     token ids over their first min(k, full_a, full_b) blocks, where full
#     is the row's full_blocks, which must be len(hash_ids) − 1 (or one less
#     when the last block leaves at most 32 tokens for the template's tail
#     and the marker);
#   * two requests whose ids differ at block k, both full there, differ in
#     that block's tokens;
#   * compose refuses a prefix target (first_turn_prefix) with a reason;
# and for internal/compose/testdata/sharegpt.json (targets none,
# first_turn_prefix and system_suffix) that every request of compose
# --dataset | send --dry-run counts exactly its expected_isl (compose skips,
# by line, a conversation the model's template refuses): texts kept, and
# resized with --isl 30 (texts cut, or below the template's own cost) and
# --isl 300 (texts continued from the corpus), where every request counts
# exactly its target_isl, or more when compose marked it unreachable.
#
#   scripts/check-trace-reference.sh            check
#   scripts/check-trace-reference.sh --update   also rewrite
#       internal/compose/testdata/trace_reference.jsonl.gz and
#       dataset_reference.jsonl.gz (what the Go tests TestTraceReference and
#       TestDatasetReference read)
#
# Needs python3-jinja2 and node with @anush008/tokenizers@0.6.0; NODE_PATH
# defaults to .bench/oracle/node_modules (`make oracle`), else /tmp/oracle/node_modules.
set -euo pipefail

source "$(dirname "$0")/reference-env.sh" "$@"

out=$tmp/trace_reference.jsonl
: >"$out"
fail=0
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  "$tmp/probe" --tokenizer "$dir" --apply-chat-template --cache-bust first_turn_prefix >"$tmp/probe.json"
  if "$tmp/compose" --probe "$tmp/probe.json" --trace "$root/internal/compose/testdata/trace.jsonl" --block-size 128 >/dev/null 2>"$tmp/err"; then
    echo "FAIL $model first_turn_prefix: compose accepted a prefix target"
    fail=1
  else
    echo "ok   $model first_turn_prefix refused: $(head -c 120 "$tmp/err")"
  fi
  for target in none first_turn_suffix; do
    "$tmp/probe" --tokenizer "$dir" --apply-chat-template --cache-bust "$target" >"$tmp/probe.json"
    for trace in trace.jsonl:128 trace512.jsonl:512; do
      file=${trace%%:*} block=${trace##*:}
      "$tmp/compose" --probe "$tmp/probe.json" --trace "$root/internal/compose/testdata/$file" --block-size "$block" --seed 1 --benchmark-id 00833c935699 --model m >"$tmp/convs.jsonl"
      "$tmp/send" --dry-run <"$tmp/convs.jsonl" >"$tmp/reqs.jsonl"
      python3 - "$tmp/convs.jsonl" "$tmp/reqs.jsonl" "$model" "$target" "$file" "$block" >"$tmp/msgs.jsonl" <<'PY'
import hashlib, json, sys
convs = {c["id"]: c for c in map(json.loads, open(sys.argv[1]))}
model, target, trace, block = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
for r in map(json.loads, open(sys.argv[2])):
    c = convs[r["conversation_id"]]
    msgs = r["payload"]["messages"]
    h = hashlib.sha256("".join(x["role"] + "\0" + x["content"] + "\0" for x in msgs).encode()).hexdigest()
    t = c["turns"][0]
    print(json.dumps({"model": model, "target": target, "trace": trace, "block": block, "line": c["trace"]["line"],
                      "hash_ids": c["trace"]["hash_ids"], "full_blocks": c["trace"]["full_blocks"],
                      "input_length": t["target_isl"], "wire_isl": t["wire_isl"], "unreachable": "unreachable" in t,
                      "messages": msgs, "messages_sha256": h}))
PY
      python3 "$oracle/wire_ref.py" "$dir" <"$tmp/msgs.jsonl" | node "$oracle/tokenize_ref.cjs" "$dir/tokenizer.json" >"$tmp/counted.jsonl"
      python3 - "$tmp/counted.jsonl" >>"$out" <<'PY'
import hashlib, json, sys
for r in map(json.loads, open(sys.argv[1])):
    if "error" in r:
        print(json.dumps({k: r[k] for k in ("model", "target", "trace", "line")} | {"error": r["error"]}))
        continue
    ids, b = r["ids"], r["block"]
    blocks = [hashlib.sha256(",".join(map(str, ids[i:i + b])).encode()).hexdigest()[:16] for i in range(0, len(ids), b)]
    print(json.dumps({k: r[k] for k in ("model", "target", "trace", "block", "line", "hash_ids", "full_blocks",
                                        "input_length", "wire_isl", "unreachable", "messages_sha256")}
                     | {"ref_tokens": len(ids), "block_sha256": blocks}))
PY
    done
  done
done

dout=$tmp/dataset_reference.jsonl
: >"$dout"
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  for target in none first_turn_prefix system_suffix; do
    "$tmp/probe" --tokenizer "$dir" --apply-chat-template --cache-bust "$target" >"$tmp/probe.json"
    for isl in 0 30 300; do
      args=()
      [[ $isl == 0 ]] || args=(--isl "$isl")
      if ! "$tmp/compose" --probe "$tmp/probe.json" --dataset "$root/internal/compose/testdata/sharegpt.json" --seed 1 --benchmark-id 00833c935699 --model m --osl 50 "${args[@]}" >"$tmp/convs.jsonl" 2>"$tmp/err"; then
        echo "{\"model\":\"$model\",\"target\":\"$target\",\"isl\":$isl,\"refused\":$(python3 -c 'import json,sys;print(json.dumps(open(sys.argv[1]).read().strip()))' "$tmp/err")}" >>"$dout"
        continue
      fi
      "$tmp/send" --dry-run <"$tmp/convs.jsonl" >"$tmp/reqs.jsonl"
      python3 - "$tmp/reqs.jsonl" "$tmp/convs.jsonl" "$model" "$target" "$isl" >"$tmp/msgs.jsonl" <<'PY'
import hashlib, json, sys
model, target, isl = sys.argv[3], sys.argv[4], int(sys.argv[5])
convs = {c["index"]: c for c in map(json.loads, open(sys.argv[2]))}
for r in map(json.loads, open(sys.argv[1])):
    msgs = r["payload"]["messages"]
    h = hashlib.sha256("".join(x["role"] + "\0" + x["content"] + "\0" for x in msgs).encode()).hexdigest()
    t = convs[r["conversation_index"]]["turns"][r["turn"]]
    print(json.dumps({"model": model, "target": target, "isl": isl, "conv": r["conversation_index"], "turn": r["turn"],
                      "expected_isl": r["expected_isl"], "target_isl": r["target_isl"], "unreachable": "unreachable" in t,
                      "messages": msgs, "messages_sha256": h}))
PY
      python3 "$oracle/wire_ref.py" "$dir" <"$tmp/msgs.jsonl" | node "$oracle/tokenize_ref.cjs" "$dir/tokenizer.json" \
        | python3 -c '
import json, sys
for r in map(json.loads, sys.stdin):
    keep = {k: r[k] for k in ("model", "target", "isl", "conv", "turn", "expected_isl", "target_isl", "unreachable", "messages_sha256")}
    keep.update({"error": r["error"]} if "error" in r else {"ref_tokens": r["tokens"]})
    print(json.dumps(keep))' >>"$dout"
    done
  done
done
python3 - "$dout" <<'PY' || fail=1
import collections, json, sys
cases = collections.OrderedDict()
for r in map(json.loads, open(sys.argv[1])):
    cases.setdefault((r["model"], r["target"], r["isl"]), []).append(r)
bad = 0
for (model, target, isl), rs in cases.items():
    label = f"{model:20s} {target:18s} sharegpt " + (f"--isl {isl:<4d}" if isl else "texts kept")
    if "refused" in rs[0]:
        print(f"FAIL {label} refused: {rs[0]['refused'][:100]}")
        bad += 1
        continue
    msgs = []
    for r in rs:
        where = f"conv {r['conv']} turn {r['turn']}: "
        if "error" in r:
            msgs.append(where + f"reference failed: {r['error']}")
        elif r["ref_tokens"] != r["expected_isl"]:
            msgs.append(where + f"reference {r['ref_tokens']} != expected_isl {r['expected_isl']}")
        elif isl and not r["unreachable"] and r["ref_tokens"] != r["target_isl"]:
            msgs.append(where + f"reference {r['ref_tokens']} != target_isl {r['target_isl']}")
        elif isl and r["unreachable"] and not r["ref_tokens"] > r["target_isl"]:
            msgs.append(where + f"marked unreachable but reference {r['ref_tokens']} <= target_isl {r['target_isl']}")
    unr = sum(1 for r in rs if r.get("unreachable"))
    print(("ok   " if not msgs else "FAIL ") + f"{label} {len(rs)} requests, reference = expected_isl" + (" = target_isl" if isl else "")
          + f" on {len(rs) - len(msgs) - unr}" + (f", {unr} unreachable (reference above target_isl)" if unr else "") + ("" if not msgs else " :: " + "; ".join(msgs)))
    bad += bool(msgs)
print(f"{len(cases) - bad}/{len(cases)} dataset cases ok")
sys.exit(1 if bad else 0)
PY

python3 - "$out" <<'PY' || fail=1
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cases = collections.OrderedDict()
for r in rows:
    cases.setdefault((r["model"], r["target"], r["trace"]), []).append(r)
bad = 0
for (model, target, trace), rs in cases.items():
    msgs = []
    pairs = 0
    for r in rs:
        if "error" in r:
            msgs.append(f"line {r['line']}: reference render failed: {r['error']}")
            continue
        n, b, L = len(r["hash_ids"]), r["block"], r["input_length"]
        if r["unreachable"]:
            if not r["ref_tokens"] > L or r["ref_tokens"] != r["wire_isl"]:
                msgs.append(f"line {r['line']}: unreachable but reference {r['ref_tokens']} (target {L}, wire_isl {r['wire_isl']})")
            continue
        if r["ref_tokens"] != L:
            msgs.append(f"line {r['line']}: reference {r['ref_tokens']} != input_length {L}")
        if not (r["full_blocks"] == n - 1 or (r["full_blocks"] == n - 2 and L - (n - 1) * b <= 32)):
            msgs.append(f"line {r['line']}: full_blocks {r['full_blocks']} for {n} ids and input_length {L}")
    ok = [r for r in rs if "error" not in r and not r["unreachable"]]
    for i, a in enumerate(ok):
        for c in ok[i + 1:]:
            k = 0
            while k < min(len(a["hash_ids"]), len(c["hash_ids"])) and a["hash_ids"][k] == c["hash_ids"][k]:
                k += 1
            f = min(k, a["full_blocks"], c["full_blocks"])
            if a["block_sha256"][:f] != c["block_sha256"][:f]:
                msgs.append(f"lines {a['line']} and {c['line']} share {k} ids but differ within their first {f} blocks")
            if k < min(a["full_blocks"], c["full_blocks"]) and a["block_sha256"][k] == c["block_sha256"][k]:
                msgs.append(f"lines {a['line']} and {c['line']} differ at id {k} but block {k} has the same tokens")
            pairs += f > 0
    unr = sum(1 for r in rs if r.get("unreachable"))
    print(("ok   " if not msgs else "FAIL ") + f"{model:20s} {target:18s} {trace:15s} {len(rs)} requests, {len(rs) - unr} exact, {unr} unreachable, {pairs} pairs sharing blocks"
          + ("" if not msgs else " :: " + "; ".join(msgs)))
    bad += bool(msgs)
print(f"{len(cases) - bad}/{len(cases)} cases ok")
sys.exit(1 if bad else 0)
PY

if [[ $update == 1 ]]; then
  gzip -9n <"$out" >"$root/internal/compose/testdata/trace_reference.jsonl.gz"
  gzip -9n <"$dout" >"$root/internal/compose/testdata/dataset_reference.jsonl.gz"
  echo "wrote internal/compose/testdata/trace_reference.jsonl.gz and dataset_reference.jsonl.gz"
fi
exit $fail
