#!/usr/bin/env bash
# Proves compose --images exact on the wire by an independent reference:
# TestImagesReference's requests (multi-turn, 0–4 images per turn, chat
# with PNGs and Responses with JPEGs, every cache-bust target) on Qwen3's
# tokenizer with Qwen2.5-VL's processor configuration, counted by
# compose_images_ref.py (Pillow, transformers' Qwen2VLImageProcessorPil and
# Qwen2_5_VLProcessor, apply_chat_template's Python Jinja2, the Rust
# tokenizers). Compares with the checked-in expectations, or rewrites them.
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
