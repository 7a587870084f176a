# islkit — see README.md. Every target works on a fresh machine with Go and
# gcc (the race detector needs cgo); `make test` also needs the reference
# files in $(SHARED). `make bench` compares with references when Node.js and
# npm (Rust tokenizers) and python3-jinja2 are there; bench-send needs jq.

GO        ?= go
BIN       ?= bin
SHARED    ?= ../shared
TOOLS     := probe compose send measure
ORACLE    := .bench/oracle
# Pinned: the first release line that knows Go 1.26; fetched through the
# module proxy by `go run` and cached by the Go build cache.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
export ISLKIT_SHARED := $(abspath $(SHARED))

.PHONY: all help build test test-short bench bench-tokenizer bench-chat bench-measure bench-compose bench-send lint fuzz demo clean oracle jinja-diff jinja-reference

## all: build the four tools (the default)
all: build

## help: list the targets, one line each (the `## name: what` lines here)
help:
	@awk '/^## [a-z-]+:/ { sub(/^## /, ""); n = index($$0, ":"); printf "  %-16s %s\n", substr($$0, 1, n-1), substr($$0, n+2) }' $(MAKEFILE_LIST)

## build: build probe, compose, send and measure into bin/
build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/ $(addprefix ./cmd/,$(TOOLS))

## test: the full suite with conformance, then the race detector on -short
# The full suite, conformance included: every golden file of $(SHARED) must
# match. ISLKIT_REQUIRE_SHARED makes a missing $(SHARED) a failure, not a
# skip. The race detector then reruns the suite in -short mode, which skips
# only the long conformance sweeps (they are single-goroutine loops).
test:
	ISLKIT_REQUIRE_SHARED=1 $(GO) test -count=1 ./...
	ISLKIT_REQUIRE_SHARED=1 $(GO) test -race -short -count=1 ./...

## test-short: the suite without the long conformance sweeps
test-short:
	$(GO) test -short -count=1 ./...

## lint: gofmt check, go vet and staticcheck (pinned) on the whole module
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

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
bench: bench-tokenizer bench-chat bench-measure bench-compose bench-send

## bench-tokenizer: our tokenizer vs HF tokenizers (Rust via Node)
# Our tokenizer vs the Rust library (Node binding), one core each.
bench-tokenizer:
	GO="$(GO)" SHARED=$(SHARED) ORACLE=$(ORACLE) bash scripts/bench-tokenizer.sh

## bench-chat: chat template renders/s vs Python Jinja2
# Chat template renders/s vs Python Jinja2 with transformers' settings.
bench-chat:
	GO="$(GO)" SHARED=$(SHARED) bash scripts/bench-chat.sh

## bench-measure: measure payloads/s vs the tokenizer alone; 1 vs 2 workers
# measure's payloads/s at ISL 1k and 8k vs the tokenizer alone on the same
# texts (vs_tokenizer), and 1 vs 2 workers.
bench-measure:
	$(GO) test ./internal/measure/ -run '^$$' -bench 'Payloads|Workers' -benchtime 200x -count 3

## bench-compose: compose of 1000 conversations vs tokenizing its output
# compose of 1000 conversations at ISL 1000 vs tokenizing its output once.
bench-compose:
	$(GO) test ./internal/compose/ -run '^$$' -bench . -benchtime 1x

## bench-send: send dry-run and live throughput vs vegeta (needs jq)
# send: dry-run payloads/s, client overhead, and live req/s vs vegeta.
bench-send:
	$(GO) test ./internal/send/ -run '^$$' -bench . -benchtime 2s
	bash scripts/bench-send.sh 16 8s

## jinja-diff: the jinja fork's changes against its upstream release (module proxy)
jinja-diff:
	GO="$(GO)" bash scripts/jinja-diff.sh

## jinja-reference: re-render the jinja fork's Python Jinja2 references (python3-jinja2)
jinja-reference:
	/usr/bin/python3 scripts/jinja-reference.py internal/chat/internal/jinja/testdata

## demo: the README's pipeline on the embedded model, offline (scripts/demo.sh)
demo: build
	bash scripts/demo.sh

## clean: remove bin/, .bench and the demo's output
clean:
	rm -rf $(BIN) .bench demo-requests.jsonl
