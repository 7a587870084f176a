#!/usr/bin/env bash
# Regenerates internal/vision's references from the real processors:
# transformers' PIL image processors and model processors, mistral-common's
# ImageEncoder (testdata/reference.jsonl.gz), and Pillow's header fixtures
# (imagehdr/testdata). CPU only, no Hub access: the configurations are the
# checked-in files under internal/vision/testdata/configs.
#   scripts/vision/make-reference.sh [VENV]   (default /tmp/islkit-vision-venv)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:-/tmp/islkit-vision-venv}
if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
	nice -n 10 "$venv/bin/pip" install -q -r "$root/scripts/vision/requirements.txt"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$venv/bin/python" "$root/scripts/vision/image_ref.py" >"$tmp/ref.jsonl"
"$venv/bin/python" "$root/scripts/vision/llama4_ref.py" >>"$tmp/ref.jsonl"
gzip -9n <"$tmp/ref.jsonl" >"$root/internal/vision/testdata/reference.jsonl.gz"
"$venv/bin/python" "$root/scripts/vision/image_headers_ref.py" "$root/internal/vision/imagehdr/testdata"
echo "wrote $(wc -l <"$tmp/ref.jsonl") reference cells"
