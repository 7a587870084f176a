#!/usr/bin/env bash
# Proves compose --images exact on the wire by an independent reference:
# TestImagesReference's requests (multi-turn, 0–4 images per turn, chat
# with PNGs and Responses with JPEGs, every cache-bust target) on Qwen3's
# tokenizer with Qwen2.5-VL's processor configuration, counted by
# compose_images_ref.py (Pillow, transformers' Qwen2VLImageProcessorPil and
# Qwen2_5_VLProcessor, apply_chat_template's Python Jinja2, the Rust
# tokenizers). Compares with the checked-in expectations, or rewrites them,
# then counts the same bodies with `measure --server vllm` (the model
# folder: Qwen3's tokenizer, Qwen2.5-VL's processor) and checks that every
# body's templated count is the reference's.
#   scripts/vision/check-compose-images-reference.sh [--update] [VENV]
# VENV (default /tmp/islkit-vision-venv) is made from requirements.txt when
# missing; CPU only, no Hub access.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
update=0
if [[ ${1:-} == --update ]]; then update=1; shift; fi
venv=${1:-/tmp/islkit-vision-venv}
if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
	nice -n 10 "$venv/bin/pip" install -q -r "$root/scripts/vision/requirements.txt"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shared=$(cd "$root" && go run ./internal/testutil/refdir)
cp "$shared"/models/qwen3/tokenizer.json "$shared"/models/qwen3/tokenizer_config.json "$tmp/"
cp "$root"/internal/vision/testdata/configs/qwen2_5_vl/* "$tmp/"
(cd "$root" && go test -count=1 -run '^TestImagesReference$' ./internal/compose -args -image-bodies "$tmp/bodies.jsonl" >/dev/null)
"$venv/bin/python" "$root/scripts/vision/compose_images_ref.py" "$tmp" "$tmp/bodies.jsonl" >"$tmp/counts.jsonl" 2>"$tmp/ref.err" || { cat "$tmp/ref.err"; exit 1; }
want=$root/internal/compose/testdata/images-reference.jsonl.gz
if [ $update = 1 ]; then
	gzip -9n <"$tmp/counts.jsonl" >"$want"
	echo "wrote $(wc -l <"$tmp/counts.jsonl") reference counts"
elif ! gzip -dc "$want" | diff -q - "$tmp/counts.jsonl" >/dev/null; then
	echo "the reference's counts differ from $want (rerun with --update and review)" >&2
	exit 1
fi
(cd "$root" && go test -count=1 -run '^TestImagesReference$' ./internal/compose)
# measure --server vllm on every body equals the reference.
"$venv/bin/python" -c 'import json, sys
for l in open(sys.argv[1]):
    # A body as sent (send adds the model).
    print(json.dumps({"model": "m", **json.loads(l)["body"]}, ensure_ascii=False))' "$tmp/bodies.jsonl" >"$tmp/payloads.jsonl"
(cd "$root" && go run ./cmd/measure --server vllm --apply-chat-template --tokenizer "$tmp" --now 2025-07-10T12:00:00Z <"$tmp/payloads.jsonl") >"$tmp/measured.jsonl"
"$venv/bin/python" - "$tmp/bodies.jsonl" "$tmp/counts.jsonl" "$tmp/measured.jsonl" <<'PY'
import json, sys
cases = [json.loads(l)["case"] for l in open(sys.argv[1])]
ref = {r["case"]: r["ref_tokens"] for r in map(json.loads, open(sys.argv[2]))}
got = [json.loads(l)["isl"] for l in open(sys.argv[3])]
bad = [(c, g.get("templated"), ref[c], g.get("error")) for c, g in zip(cases, got) if g.get("templated") != ref[c]]
for b in bad:
    print("measure %s: %s, reference %s %s" % b, file=sys.stderr)
if bad or len(got) != len(cases):
    sys.exit("measure --server vllm differs from the reference on %d of %d bodies (%d measured)" % (len(bad), len(cases), len(got)))
print("measure --server vllm equals the reference on all %d bodies (%d images)" % (len(cases), sum(json.loads(l)["images"] for l in open(sys.argv[1]))))
PY
