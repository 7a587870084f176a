#!/usr/bin/env bash
# check-compose-reference.sh — proves `probe | compose --exact` against the
# reference renderer and tokenizer (testdata/conformance/oracle: Python Jinja2 as
# transformers renders, and the Rust HuggingFace tokenizers).
#
# For every reference model, every --cache-bust target and
# --isl 64, 1000, 8000 it composes 2 conversations of 2 turns, rebuilds each
# request independently of the Go code (marker digest and injection
# re-implemented here), renders and counts it with the reference and checks:
#   * without a shared system prompt: every request counts exactly its
#     target_isl (the first request: exactly --isl) and compose's wire_isl;
#   * with --shared-system-prompt-length 200 (at --isl 1000): the system
#     prompt with the marker injected counts exactly 200 tokens, and every
#     request counts compose's wire_isl == target_isl; models whose template
#     refuses a system message (Mistral v0.1) must be refused by compose.
#
#   scripts/check-compose-reference.sh            check
#   scripts/check-compose-reference.sh --update   also rewrite
#       internal/compose/testdata/reference.jsonl (the expected counts the
#       Go test TestReferenceCounts reads)
#
# Needs python3-jinja2 and node with @anush008/tokenizers@0.6.0 (see
# ARCHITECTURE.md); NODE_PATH defaults to .bench/oracle/node_modules (`make oracle`), else /tmp/oracle/node_modules.
set -euo pipefail

TOOLS="probe compose" source "$(dirname "$0")/reference-env.sh" "$@"

out=$tmp/reference.jsonl
: >"$out"
fail=0
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  for target in none system_prefix system_suffix first_turn_prefix first_turn_suffix; do
    "$tmp/probe" --tokenizer "$dir" --apply-chat-template --cache-bust "$target" >"$tmp/probe.json"
    for isl in 64 1000 8000 sys; do
      args=(--isl "$isl" --conversations 2 --turns 2 --osl 32 --seed 1 --benchmark-id 00833c935699)
      sys=0
      if [[ $isl == sys ]]; then
        sys=200
        args=(--isl 1000 --conversations 2 --turns 2 --osl 32 --seed 1 --benchmark-id 00833c935699 --shared-system-prompt-length 200)
      fi
      if ! "$tmp/compose" --probe "$tmp/probe.json" "${args[@]}" >"$tmp/convs.jsonl" 2>"$tmp/err"; then
        echo "{\"model\":\"$model\",\"target\":\"$target\",\"isl\":${args[1]},\"system\":$sys,\"refused\":$(python3 -c 'import json,sys;print(json.dumps(open(sys.argv[1]).read().strip()))' "$tmp/err")}" >>"$out"
        continue
      fi
      python3 - "$tmp/convs.jsonl" "$model" "$target" "${args[1]}" "$sys" >"$tmp/req.jsonl" <<'PY'
import hashlib, json, sys
convs, model, target, isl, system = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def marker(c):
    if c["cache_bust"] == "none":
        return ""
    d = hashlib.sha256(f'{c["benchmark_id"]}:0:{c["index"]}:{c["id"]}'.encode()).hexdigest()[:12]
    core = f"[rid:{d}]"
    return core + "\n\n" if c["cache_bust"].endswith("prefix") else "\n\n" + core
def mark(s, m, prefix):
    return m + s if prefix else s + m
for c in map(json.loads, open(convs)):
    m = marker(c)
    slot, _, end = c["marker_landing"].partition("/")
    prefix = end == "prefix"
    sp = c.get("system_prompt")
    if sp:
        text = mark(sp["text"], m, prefix) if slot == "shared_system_prompt" else sp["text"]
        print(json.dumps({"kind": "system", "model": model, "target": target, "isl": isl, "system": system,
                          "conv": c["index"], "text": text, "want": sp["requested_tokens"]}))
    for k, t in enumerate(c["turns"]):
        msgs = [{"role": "system", "content": sp["text"]}] if sp else []
        for j in range(k):
            msgs += [{"role": "user", "content": c["turns"][j]["text"]}, {"role": "assistant", "content": c["turns"][j]["assistant"]}]
        msgs.append({"role": "user", "content": t["text"]})
        if m:
            i = 0 if slot == "shared_system_prompt" else next(i for i, x in enumerate(msgs) if x["role"] == "user")
            msgs[i] = dict(msgs[i], content=mark(msgs[i]["content"], m, prefix))
        h = hashlib.sha256("".join(x["role"] + "\0" + x["content"] + "\0" for x in msgs).encode()).hexdigest()
        print(json.dumps({"kind": "request", "model": model, "target": target, "isl": isl, "system": system,
                          "conv": c["index"], "turn": k, "messages": msgs, "messages_sha256": h,
                          "target_isl": t["target_isl"], "wire_isl": t.get("wire_isl"),
                          "unreachable": t.get("unreachable") is not None}))
PY
      python3 - "$tmp/req.jsonl" >"$tmp/sys.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r["kind"] == "system":
        print(json.dumps(r))
PY
      grep '"kind": "request"' "$tmp/req.jsonl" | python3 "$oracle/wire_ref.py" "$dir" \
        | node "$oracle/tokenize_ref.cjs" "$dir/tokenizer.json" >"$tmp/counted.jsonl"
      if [[ -s $tmp/sys.jsonl ]]; then
        node "$oracle/tokenize_ref.cjs" "$dir/tokenizer.json" <"$tmp/sys.jsonl" >"$tmp/syscounted.jsonl"
      else
        : >"$tmp/syscounted.jsonl"
      fi
      python3 - "$tmp/counted.jsonl" "$tmp/syscounted.jsonl" >>"$out" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if "error" in r:
        print(json.dumps({"model": r["model"], "target": r["target"], "isl": r["isl"], "system": r["system"], "conv": r["conv"], "turn": r["turn"], "error": r["error"]}))
        continue
    print(json.dumps({"model": r["model"], "target": r["target"], "isl": r["isl"], "system": r["system"], "conv": r["conv"],
                      "turn": r["turn"], "messages_sha256": r["messages_sha256"], "ref_tokens": r["tokens"],
                      "target_isl": r["target_isl"], "wire_isl": r["wire_isl"], "unreachable": r["unreachable"]}))
for r in map(json.loads, open(sys.argv[2])):
    print(json.dumps({"model": r["model"], "target": r["target"], "isl": r["isl"], "system": r["system"], "conv": r["conv"],
                      "system_ref_tokens": r["tokens"], "system_want": r["want"]}))
PY
    done
  done
done

# Judge: print one line per model x target x case and fail on any mismatch.
python3 - "$out" <<'PY' || fail=1
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
cases = collections.OrderedDict()
for r in rows:
    cases.setdefault((r["model"], r["target"], r["isl"], r["system"]), []).append(r)
bad = 0
for (model, target, isl, system), rs in cases.items():
    label = f"{model:20s} {target:18s} isl={isl:<5d}" + (f" system={system}" if system else "")
    if "refused" in rs[0]:
        ok = model.startswith("mistral7b") and system > 0
        print(("ok   " if ok else "FAIL ") + label + " refused: " + rs[0]["refused"][:100])
        bad += not ok
        continue
    msgs = []
    for r in rs:
        if "error" in r:
            msgs.append(f"reference render failed: {r['error']}")
        elif "system_ref_tokens" in r:
            if r["system_ref_tokens"] != r["system_want"]:
                msgs.append(f"conv {r['conv']} system prompt+marker {r['system_ref_tokens']} != {r['system_want']}")
        else:
            if r["ref_tokens"] != r["wire_isl"]:
                msgs.append(f"conv {r['conv']} turn {r['turn']}: reference {r['ref_tokens']} != compose wire_isl {r['wire_isl']}")
            if not r["unreachable"] and r["ref_tokens"] != r["target_isl"]:
                msgs.append(f"conv {r['conv']} turn {r['turn']}: reference {r['ref_tokens']} != target {r['target_isl']}")
            if not system and r["turn"] == 0 and r["ref_tokens"] != isl and not r["unreachable"]:
                msgs.append(f"conv {r['conv']}: first request {r['ref_tokens']} != --isl {isl}")
            if r["unreachable"] and not r["wire_isl"] > r["target_isl"]:
                msgs.append(f"conv {r['conv']} turn {r['turn']}: marked unreachable but wire {r['wire_isl']} <= target {r['target_isl']}")
    first = [r["ref_tokens"] for r in rs if r.get("turn") == 0 and "ref_tokens" in r]
    unr = sorted({r["ref_tokens"] for r in rs if r.get("unreachable") and r.get("turn") == 0})
    note = f" (target below the template's own cost: marked unreachable, minimum {unr})" if unr else ""
    print(("ok   " if not msgs else "FAIL ") + label + f" first-request reference tokens {first}" + note + ("" if not msgs else " :: " + "; ".join(msgs)))
    bad += bool(msgs)
print(f"{len(cases) - bad}/{len(cases)} cases ok")
sys.exit(1 if bad else 0)
PY

if [[ $update == 1 ]]; then
  mkdir -p "$root/internal/compose/testdata"
  cp "$out" "$root/internal/compose/testdata/reference.jsonl"
  echo "wrote internal/compose/testdata/reference.jsonl"
fi
exit $fail
