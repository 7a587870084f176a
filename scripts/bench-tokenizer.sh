#!/usr/bin/env bash
# Tokenizer throughput and load time, ours against the Rust HuggingFace
# library measured in the same run on the same texts (every text of the
# golden token files), one core each. The Rust side runs when Node and npm
# are available (`make oracle` installs the binding).
set -euo pipefail
GO=${GO:-go}
REF=${REF:-$($GO run ./internal/testutil/refdir)} # the unpacked reference tree
ORACLE=${ORACLE:-.bench/oracle}
MODELS="llama3 qwen3 deepseek_v3 gptoss mistral7b mistral7b-metaspace"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "Go: go test -bench (one core)…" >&2
$GO test ./internal/tokenizer/ -run '^$' \
  -bench '^Benchmark(Encode|CountFresh|Load|LoadFirst|LoadCached)$' -cpu 1 -benchtime 3x >"$out/go.txt"

rust=0
if command -v node >/dev/null && command -v npm >/dev/null; then
  make --no-print-directory oracle ORACLE="$ORACLE" >&2 # the Makefile's one install line
  echo "Rust: HuggingFace tokenizers 0.22 via Node (one thread)…" >&2
  NODE_PATH="$ORACLE/node_modules" node scripts/bench-tokenizer-rust.cjs "$REF" $MODELS >"$out/rust.txt"
  rust=1
else
  echo "Node/npm not found: Rust reference skipped" >&2
fi

awk -v rust="$rust" -v rustfile="$out/rust.txt" -v models="$MODELS" '
  function med(a, n) { return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
  function isort(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j+1] = a[j]; a[j+1] = x } }
  /^BenchmarkEncode\// { split($1, a, "[/-]"); m = substr($1, 17); sub(/-[0-9]+$/, "", m); for (i = 1; i <= NF; i++) { if ($(i+1) == "MB/s") enc[m] = $i; if ($(i+1) == "tokens/s") tps[m] = $i } }
  /^BenchmarkCountFresh\// { m = substr($1, 21); sub(/-[0-9]+$/, "", m); for (i = 1; i <= NF; i++) if ($(i+1) == "coldMB/s") cold[m] = $i }
  /^BenchmarkLoad\// { m = substr($1, 15); sub(/-[0-9]+$/, "", m); load[m] = $3 / 1e9 }
  /^BenchmarkLoadCached\// { m = substr($1, 21); sub(/-[0-9]+$/, "", m); cached[m] = $3 / 1e9 }
  /^BenchmarkLoadFirst\// { m = substr($1, 20); sub(/-[0-9]+$/, "", m); first[m] = $3 / 1e9 }
  END {
    if (rust) while ((getline line < rustfile) > 0) { split(line, f, " "); rload[f[1]] = f[2]; rseq[f[1]] = f[3]; rbat[f[1]] = f[4] }
    printf "%-20s %10s %12s %10s %10s %10s %8s %9s %9s\n", "model", "ours MB/s", "ours tok/s", "cold MB/s", "Rust seq", "Rust batch", "ratio", "load ours", "load Rust"
    n = split(models, ms, " ")
    for (k = 1; k <= n; k++) {
      m = ms[k]
      if (rust) printf "%-20s %10.2f %12.0f %10.2f %10.2f %10.2f %7.1fx %8.3fs %8.3fs\n", m, enc[m], tps[m], cold[m], rseq[m], rbat[m], enc[m] / rbat[m], load[m], rload[m]
      else printf "%-20s %10.2f %12.0f %10.2f %10s %10s %8s %8.3fs %9s\n", m, enc[m], tps[m], cold[m], "-", "-", "-", load[m], "-"
    }
    print "ratio = ours / Rust batched (encodeBatch, one thread), both warm, same texts, same run."
    if (rust) {
      # Load times: ours parsed without a cache, parsed and written to an
      # empty cache (a first load), and from a warm cache (ISLKIT_CACHE),
      # each over the Rust Tokenizer.fromFile of the same file (median of 5).
      printf "\n%-20s %9s %9s %9s %9s %10s %10s %11s\n", "model", "load ours", "first", "cached", "load Rust", "ours/Rust", "first/Rust", "cached/Rust"
      for (k = 1; k <= n; k++) {
        m = ms[k]; fr[k] = load[m] / rload[m]; ff[k] = first[m] / rload[m]; cr[k] = cached[m] / rload[m]
        printf "%-20s %8.3fs %8.3fs %8.3fs %8.3fs %9.2fx %9.2fx %10.2fx\n", m, load[m], first[m], cached[m], rload[m], fr[k], ff[k], cr[k]
      }
      isort(fr, n); isort(ff, n); isort(cr, n)
      printf "load ratio over Rust, min/median/max: parse %.2f/%.2f/%.2f, first %.2f/%.2f/%.2f, cached %.2f/%.2f/%.2f\n", fr[1], med(fr, n), fr[n], ff[1], med(ff, n), ff[n], cr[1], med(cr, n), cr[n]
    }
  }' "$out/go.txt"
