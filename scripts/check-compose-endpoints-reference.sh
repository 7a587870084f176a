#!/usr/bin/env bash
# check-compose-endpoints-reference.sh — proves `probe | compose | send --dry-run`
# for --endpoint completions and responses against the independent
# reference of vLLM's prompt count (testdata/conformance/oracle:
# endpoint_ref.py, which turns a completions or Responses body into what
# vLLM tokenizes, rendering Responses through Python Jinja2 as transformers
# does, and count_ref.cjs, the Rust HuggingFace tokenizers with the
# post-processor's special tokens where vLLM adds them).
#
# For every reference model, both endpoints, every --cache-bust target and
# --isl 64, 1000, 8000 it composes 2 conversations (1 turn for completions,
# 2 for responses), writes the dry run, counts each payload with the
# reference and checks that it equals compose's count (the record's
# expected_isl) and the turn's target: exactly --isl for every first
# request (a target below what the template alone costs, gpt-oss's at 64,
# must be marked unreachable, its minimum the reference's count); later
# Responses turns exactly their target_isl. Responses also
# runs --isl 1000 with --shared-system-prompt-length 200 (the system prompt
# travels as "instructions"); a template that refuses a system message
# (Mistral v0.1) must be refused by compose.
#
#   scripts/check-compose-endpoints-reference.sh            check
#   scripts/check-compose-endpoints-reference.sh --update   also rewrite
#       internal/compose/testdata/endpoints-reference.jsonl.gz (the expected
#       counts the Go test TestEndpointsDryRunReference reads)
#
# Needs python3-jinja2 and node with @anush008/tokenizers@0.6.0 (see
# ARCHITECTURE.md); NODE_PATH defaults to .bench/oracle/node_modules (`make
# oracle`), else /tmp/oracle/node_modules.
set -euo pipefail

source "$(dirname "$0")/reference-env.sh" "$@"

out=$tmp/reference.jsonl
: >"$out"
fail=0
for dir in "$shared"/models/*/; do
  model=$(basename "$dir")
  for endpoint in completions responses; do
    for target in none system_prefix system_suffix first_turn_prefix first_turn_suffix; do
      if [[ $endpoint == completions ]]; then
        "$tmp/probe" --tokenizer "$dir" --endpoint completions --cache-bust "$target" >"$tmp/probe.json"
        cases="64 1000 8000"
        turns=1
      else
        "$tmp/probe" --tokenizer "$dir" --endpoint responses --apply-chat-template --cache-bust "$target" >"$tmp/probe.json"
        cases="64 1000 8000 sys"
        turns=2
      fi
      for isl in $cases; do
        sys=0
        args=(--isl "$isl")
        if [[ $isl == sys ]]; then
          sys=200
          args=(--isl 1000 --shared-system-prompt-length 200)
        fi
        args+=(--conversations 2 --turns "$turns" --osl 32 --seed 1 --benchmark-id 00833c935699 --model ref)
        label="{\"model\":\"$model\",\"endpoint\":\"$endpoint\",\"target\":\"$target\",\"isl\":${args[1]},\"system\":$sys"
        if ! "$tmp/compose" --probe "$tmp/probe.json" "${args[@]}" >"$tmp/convs.jsonl" 2>"$tmp/err"; then
          echo "$label,\"refused\":$(python3 -c 'import json,sys;print(json.dumps(open(sys.argv[1]).read().strip()))' "$tmp/err")}" >>"$out"
          continue
        fi
        "$tmp/send" --dry-run --exact-osl=false "$tmp/convs.jsonl" >"$tmp/dry.jsonl"
        python3 "$oracle/endpoint_ref.py" "$dir" <"$tmp/dry.jsonl" \
          | node "$oracle/count_ref.cjs" "$dir/tokenizer.json" >"$tmp/counts.txt"
        python3 - "$tmp/convs.jsonl" "$tmp/dry.jsonl" "$tmp/counts.txt" "$label" >>"$out" <<'PY'
import hashlib, json, sys
convs = {c["id"]: c for c in map(json.loads, open(sys.argv[1]))}
dry = [json.loads(l) for l in open(sys.argv[2])]
counts = [l.rstrip("\n") for l in open(sys.argv[3])]
assert len(dry) == len(counts), (len(dry), len(counts))
label = json.loads(sys.argv[4] + "}")
for r, n in zip(dry, counts):
    t = convs[r["conversation_id"]]["turns"][r["turn"]]
    # The payload as send wrote it, re-serialised compactly with sorted
    # keys: the Go test hashes its own dry run the same way.
    h = hashlib.sha256(json.dumps(r["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    row = dict(label, conv=r["conversation_index"], turn=r["turn"], endpoint_record=r.get("endpoint"),
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
done

# Judge: one line per model x endpoint x target x case; fail on any mismatch.
python3 - "$out" <<'PY' || fail=1
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
cases = collections.OrderedDict()
for r in rows:
    cases.setdefault((r["model"], r["endpoint"], r["target"], r["isl"], r["system"]), []).append(r)
bad = 0
for (model, endpoint, target, isl, system), rs in cases.items():
    label = f"{model:20s} {endpoint:11s} {target:18s} isl={isl:<5d}" + (f" system={system}" if system else "")
    if "refused" in rs[0]:
        ok = model.startswith("mistral7b") and system > 0
        print(("ok   " if ok else "FAIL ") + label + " refused: " + rs[0]["refused"][:100])
        bad += not ok
        continue
    msgs = []
    for r in rs:
        if r["endpoint_record"] != endpoint:
            msgs.append(f"conv {r['conv']} turn {r['turn']}: record endpoint {r['endpoint_record']}")
        if "error" in r:
            msgs.append(f"conv {r['conv']} turn {r['turn']}: reference: {r['error']}")
            continue
        ref = r["ref_tokens"]
        if ref != r["expected_isl"]:
            msgs.append(f"conv {r['conv']} turn {r['turn']}: reference {ref} != compose {r['expected_isl']}")
        if not r["unreachable"] and ref != r["target_isl"]:
            msgs.append(f"conv {r['conv']} turn {r['turn']}: reference {ref} != target {r['target_isl']}")
        if r["unreachable"] and not ref > r["target_isl"]:
            msgs.append(f"conv {r['conv']} turn {r['turn']}: marked unreachable but the reference counts {ref} <= target {r['target_isl']}")
        if not system and r["turn"] == 0 and ref != isl and not r["unreachable"]:
            msgs.append(f"conv {r['conv']}: first request {ref} != --isl {isl}")
    first = [r.get("ref_tokens") for r in rs if r["turn"] == 0]
    later = [r.get("ref_tokens") for r in rs if r["turn"] > 0]
    unr = sorted({r["ref_tokens"] for r in rs if r["unreachable"] and r["turn"] == 0 and "ref_tokens" in r})
    note = f" (target below the template's own cost: marked unreachable, minimum {unr})" if unr else ""
    print(("ok   " if not msgs else "FAIL ") + label + f" first {first}" + (f" later {later}" if later else "") + note + ("" if not msgs else " :: " + "; ".join(msgs)))
    bad += bool(msgs)
print(f"{len(cases) - bad}/{len(cases)} cases ok")
sys.exit(1 if bad else 0)
PY

if [[ $update == 1 ]]; then
  mkdir -p "$root/internal/compose/testdata"
  gzip -9n <"$out" >"$root/internal/compose/testdata/endpoints-reference.jsonl.gz"
  echo "wrote internal/compose/testdata/endpoints-reference.jsonl.gz"
fi
exit $fail
