#!/usr/bin/env bash
# The conformance reference data the tests read lives in
# testdata/conformance/*.tar.zst. This script moves it between those archives
# and a reference tree laid out like ../shared (models/, golden/, templates/,
# reference/):
#
#   scripts/conformance.sh pack  [DIR]   archives from DIR (default ../shared)
#   scripts/conformance.sh check [DIR]   report how DIR differs from the archives
#   scripts/conformance.sh regen DIR     recompute DIR's golden files with the
#                                        reference libraries (Rust tokenizers via
#                                        npm, Python Jinja2 via Debian), in place
#
# The archives are deterministic (sorted names, zero times and owners), so
# packing an unchanged tree changes no byte. zstd's long mode lets one
# archive hold near-identical files (llama3 and llama3_1, the six golden token
# files sharing their texts) for little more than one copy.
set -euo pipefail
cd "$(dirname "$0")/.."
out=testdata/conformance
oracle=$out/oracle
cmd=${1:-}
dir=${2:-../shared}

# The Qwen3 model is the embedded default (internal/modelsrc/defaultmodel):
# byte-identical to the reference folder, so it is not stored twice.
models=(deepseek_v3 gptoss llama3 llama3_1 mistral7b mistral7b-metaspace)

pack_one() { # archive, paths...
  local archive=$1; shift
  tar -C "$dir" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
      --mode='a+r,u+w,go-w' --format=gnu -cf - "$@" \
    | zstd -q -19 --long=27 -T0 -f -o "$out/$archive"
}

case "$cmd" in
pack)
  command -v zstd >/dev/null || { echo "conformance.sh: zstd is needed (apt-get install zstd)" >&2; exit 2; }
  pack_one models.tar.zst "${models[@]/#/models/}"
  pack_one golden.tar.zst golden templates reference/unicode16-classes.json
  ls -l "$out"/*.tar.zst
  ;;
check)
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  for a in "$out"/*.tar.zst; do zstd -q -d --long=27 -c "$a" | tar -C "$tmp" -xf -; done
  report=$(
    (cd "$tmp" && find . -type f | sort) | while read -r f; do
      if [ ! -f "$dir/$f" ]; then echo "only in the repository: ${f#./}";
      elif ! cmp -s "$tmp/$f" "$dir/$f"; then echo "differs: ${f#./}"; fi
    done
    for sub in models golden templates; do
      [ -d "$dir/$sub" ] || continue
      (cd "$dir" && find "$sub" -type f | sort) | while read -r f; do
        case "$f" in models/qwen3/*)
          gz=internal/modelsrc/defaultmodel/$(basename "$f").gz
          [ -f "$gz" ] && gzip -dc "$gz" | cmp -s - "$dir/$f" || echo "differs from the embedded default model: $f"
          continue ;;
        esac
        [ -f "$tmp/$f" ] || echo "new in $dir: $f (scripts/conformance.sh pack $dir brings it in)"
      done
    done
  )
  if [ -z "$report" ]; then
    echo "testdata/conformance holds exactly the reference files of $dir"
  else
    echo "$report"
  fi
  ;;
regen)
  [ -d "$dir/models" ] || { echo "conformance.sh regen DIR: DIR/models is needed" >&2; exit 2; }
  command -v python3 >/dev/null && python3 -c 'import jinja2' 2>/dev/null \
    || { echo "conformance.sh: python3-jinja2 is needed (apt-get install python3-jinja2)" >&2; exit 2; }
  npm install --no-package-lock --no-audit --no-fund --prefix .bench/oracle @anush008/tokenizers@0.6.0 >/dev/null
  export NODE_PATH=$PWD/.bench/oracle/node_modules
  # Token ids: the same texts, re-encoded by the Rust library.
  for f in "$dir"/golden/tokens/*.jsonl; do
    m=$(basename "$f" .jsonl)
    python3 -c 'import json,sys
for l in sys.stdin: print(json.dumps({"text": json.loads(l)["text"]}, ensure_ascii=False))' < "$f" \
      | node "$oracle/tokenize_ref.cjs" "$dir/models/$m/tokenizer.json" \
      | python3 -c 'import json,sys
for l in sys.stdin:
    r=json.loads(l); print(json.dumps({"text": r["text"], "ids": r["ids"]}, ensure_ascii=False))' > "$f.new"
    mv "$f.new" "$f"
  done
  # Wire cases: re-rendered by Jinja2 as transformers does, then counted.
  for f in "$dir"/golden/wire/*.jsonl; do
    m=$(basename "$f" .jsonl)
    python3 -c 'import json,sys
keep=("case","messages","add_generation_prompt","tools","now")
for l in sys.stdin:
    r=json.loads(l); print(json.dumps({k:r[k] for k in keep if k in r}, ensure_ascii=False))' < "$f" \
      | REF_NOW=2025-07-10T12:00:00 python3 "$oracle/wire_ref.py" "$dir/models/$m" \
      | node "$oracle/tokenize_ref.cjs" "$dir/models/$m/tokenizer.json" > "$f.new"
    mv "$f.new" "$f"
  done
  # Template renders: every context through Python Jinja2.
  python3 "$oracle/render_ref.py" batch "$dir/templates" < "$dir/golden/templates.jsonl" > "$dir/golden/templates.jsonl.new"
  mv "$dir/golden/templates.jsonl.new" "$dir/golden/templates.jsonl"
  echo "regenerated $dir/golden; scripts/conformance.sh pack $dir stores it"
  ;;
*)
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
