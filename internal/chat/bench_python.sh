#!/usr/bin/env bash
# Measures Python Jinja2 renders/s on the inputs BenchmarkRender uses (the
# "tools_gp" wire case of llama3, qwen3 and gptoss), with the environment of
# oracle/render_ref.py (transformers' apply_chat_template settings), so that
# `make bench` can print the Go/Python ratio. Output lines:
#   python <model> <renders/s>
# Needs python3-jinja2. REF is the unpacked reference tree (go run ./internal/testutil/refdir).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ref=${REF:-$(cd "$root" && go run ./internal/testutil/refdir)}
python3 - "$ref" "$root/testdata/conformance/oracle" <<'PY'
import json, os, sys, time
shared = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import render_ref, wire_ref

render_ref.set_now("2025-07-10T12:00:00")
for model in ("llama3", "qwen3", "gptoss"):
    src, special = wire_ref.load_model(os.path.join(shared, "models", model))
    rec = next(json.loads(l) for l in open(os.path.join(shared, "golden", "wire", model + ".jsonl"))
               if json.loads(l)["case"] == "tools_gp")
    ctx = dict(special)
    ctx.update(messages=[dict(m, content=wire_ref.text_of(m.get("content"))) for m in rec["messages"]],
               tools=rec.get("tools"), documents=None, add_generation_prompt=True)
    assert render_ref.render(src, ctx) == rec["text"], model
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 2.0:
        render_ref.render(src, ctx)  # compiled once, cached like transformers
        n += 1
    print(f"python {model} {n / (time.perf_counter() - start):.0f}")
PY
