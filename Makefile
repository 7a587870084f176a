# islkit — see README.md. Every target works on a fresh machine with Go and
# gcc (the race detector needs cgo); `make test` also needs the reference
# files in $(SHARED). `make bench` compares with references when Node.js and
# npm (Rust tokenizers) and python3-jinja2 are there; bench-send needs jq.

GO        ?= go
BIN       ?= bin
SHARED    ?= ../shared
TOOLS     := probe compose send measure
ORACLE    := .bench/oracle
export ISLKIT_SHARED := $(abspath $(SHARED))

.PHONY: all build test test-short test-browser browser bench bench-tokenizer bench-chat bench-measure bench-compose bench-send lint fuzz demo clean oracle

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/ $(addprefix ./cmd/,$(TOOLS))

# The full suite, conformance included: every golden file of $(SHARED) must
# match. ISLKIT_REQUIRE_SHARED makes a missing $(SHARED) a failure, not a
# skip. The race detector then reruns the suite in -short mode, which skips
# only the long conformance sweeps (they are single-goroutine loops).
test: browser
	ISLKIT_REQUIRE_SHARED=1 $(GO) test -count=1 ./...
	ISLKIT_REQUIRE_SHARED=1 $(GO) test -race -short -count=1 ./...

test-short:
	$(GO) test -short -count=1 ./...

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

# The browser check alone, required to run (fails if chromium is missing).
test-browser: browser
	ISLKIT_REQUIRE_BROWSER=1 $(GO) test -count=1 -run TestReportInBrowser -v ./internal/report

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Short coverage-guided runs of every fuzz target.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime 20s || exit 1; \
	  done; \
	done

# The Rust reference (HuggingFace tokenizers through its Node binding) for
# the comparisons in `make bench`; installed from the npm registry.
oracle: $(ORACLE)/node_modules/@anush008/tokenizers
$(ORACLE)/node_modules/@anush008/tokenizers:
	npm install --no-package-lock --no-audit --no-fund --prefix $(ORACLE) @anush008/tokenizers@0.6.0

# Speed, each figure against a reference measured in the same run.
bench: bench-tokenizer bench-chat bench-measure bench-compose bench-send

# Our tokenizer vs the Rust library (Node binding), one core each.
bench-tokenizer:
	GO="$(GO)" SHARED=$(SHARED) ORACLE=$(ORACLE) bash scripts/bench-tokenizer.sh

# Chat template renders/s vs Python Jinja2 with transformers' settings.
bench-chat:
	GO="$(GO)" SHARED=$(SHARED) bash scripts/bench-chat.sh

# measure's payloads/s at ISL 1k and 8k vs the tokenizer alone on the same
# texts (vs_tokenizer), and 1 vs 2 workers.
bench-measure:
	$(GO) test ./internal/measure/ -run '^$$' -bench 'Payloads|Workers' -benchtime 200x -count 3

# compose of 1000 conversations at ISL 1000 vs tokenizing its output once.
bench-compose:
	$(GO) test ./internal/compose/ -run '^$$' -bench . -benchtime 1x

# send: dry-run payloads/s, client overhead, and live req/s vs vegeta.
bench-send:
	$(GO) test ./internal/send/ -run '^$$' -bench . -benchtime 2s
	bash scripts/bench-send.sh 16 8s

demo: build
	bash scripts/demo.sh

clean:
	rm -rf $(BIN) .bench demo-requests.jsonl
