#!/bin/sh
# Regenerates internal/serverprofile/testdata/expected.jsonl.gz from
# testdata/cases.jsonl with the independent reference (Python Jinja2 for the
# preprocessing and render, the Rust tokenizers through Node for the count).
#   apt-get install -y python3-jinja2
#   npm install --no-package-lock --prefix /tmp/oracle @anush008/tokenizers@0.6.0
set -eu
cd "$(dirname "$0")/.."
MODELS=${MODELS:-../shared/models}
export NODE_PATH=${NODE_PATH:-/tmp/oracle/node_modules}
export REF_NOW=${REF_NOW:-2025-07-10T12:00:00}
TD=internal/serverprofile/testdata
/usr/bin/python3 scripts/serverprofile-ref.py "$TD/cases.jsonl" "$MODELS" qwen3 llama3_1 deepseek_v3 gptoss mistral7b \
  | node scripts/serverprofile-ref-count.cjs "$MODELS" | gzip -9n > "$TD/expected.jsonl.gz"
/usr/bin/python3 scripts/serverprofile-ref.py --formats shared="${TEMPLATES:-../shared/templates}" \
  local="$TD/templates" > "$TD/formats.jsonl"
echo "wrote $TD/expected.jsonl.gz ($(gzip -dc "$TD/expected.jsonl.gz" | wc -l) lines)"
