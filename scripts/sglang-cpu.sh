#!/usr/bin/env bash
# sglang-cpu.sh — SGLang's own chat preprocessing counts islkit's chat
# bodies (scripts/vllm/bodies.sh) on every reference model; the Go test
# e2e TestSGLangExpectations then asserts `measure --server sglang` agrees.
#
#   scripts/sglang-cpu.sh check | update   (update rewrites
#                                          testdata/sglang/expectations.jsonl.gz)
#
# SGLang's server does not start on this CPU (the sglang package needs its
# CUDA kernels: sglang-kernel, flashinfer), so the server's OpenAI chat
# handler runs in-process instead (scripts/sglang/count.py): the real
# OpenAIServingChat, TemplateManager and ServerArgs defaults, around the
# real tokenizer, with a stand-in tokenizer manager. sglang goes in with
# --no-deps and the few packages its import needs
# (scripts/sglang/requirements.lock), into
# ${XDG_CACHE_HOME:-~/.cache}/islkit/sglang. Completions and Responses
# bodies are left out (SGLang sends them through its tokenizer manager,
# which needs the scheduler). The tiny models' config.json (model_type,
# which picks the tokenizer class) comes from scripts/vllm-cpu.sh.
set -euo pipefail
SGLANG_VERSION=0.5.23
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/islkit
venv=$cache/sglang/venv
expect=$root/testdata/sglang/expectations.jsonl.gz
if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sglang' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q uv==0.13.9
  export SSL_CERT_FILE=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
  nice -n 10 "$venv/bin/uv" pip install --python "$venv/bin/python" --system-certs --no-deps "sglang==$SGLANG_VERSION"
  nice -n 10 "$venv/bin/uv" pip install --python "$venv/bin/python" --system-certs -r "$root/scripts/sglang/requirements.lock"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/" ./cmd/probe ./cmd/compose ./cmd/send ./cmd/measure)
ref=$(cd "$root" && go run ./internal/testutil/refdir)
bash "$root/scripts/vllm/bodies.sh" "$tmp" "$ref" "$tmp/cases.jsonl"
bash "$root/scripts/vllm-cpu.sh" models >/dev/null
: >"$tmp/counted.jsonl"
for name in $(ls "$ref/models"); do
  grep -F "\"model\": \"$name\"" "$tmp/cases.jsonl" \
    | nice -n 10 "$venv/bin/python" "$root/scripts/sglang/count.py" "$cache/vllm-cpu/models/$name" "$name" >>"$tmp/counted.jsonl" 2>"$tmp/err" \
    || { tail -5 "$tmp/err"; exit 1; }
  echo "$name: $(grep -c '' "$tmp/counted.jsonl") chat bodies so far; $(grep kind "$tmp/err" | tail -1)"
done
{
  "$venv/bin/python" - <<'PY'
import datetime, importlib.metadata as md, json
v = {p: md.version(p) for p in ("sglang", "transformers", "tokenizers", "jinja2")}
day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
print(json.dumps({"kind": "islkit.sglang-expectations", "server": "sglang", "versions": v,
                  "served": "in-process OpenAIServingChat._process_messages (scripts/sglang/count.py)",
                  "now": day + "T12:00:00", "generated": "scripts/sglang-cpu.sh update"}))
PY
  cat "$tmp/counted.jsonl"
} >"$tmp/expectations.jsonl"
if [ "${1:-check}" = update ]; then
  mkdir -p "$(dirname "$expect")"
  gzip -n9 <"$tmp/expectations.jsonl" >"$expect"
  echo "wrote $expect"
fi
(cd "$root" && ISLKIT_SGLANG_EXPECTATIONS=$tmp/expectations.jsonl go test -count=1 -run TestSGLangExpectations -v ./internal/e2e/ | grep -E '^(---|ok|FAIL)|bodies equal|sglang ' | head -60)
