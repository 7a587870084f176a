#!/usr/bin/env bash
# Chat template renders/s, ours against Python Jinja2 with transformers'
# settings, in the same run on the same inputs (the tools_gp wire case of
# llama3, qwen3 and gptoss). Python needs python3-jinja2 (Debian package).
set -euo pipefail
GO=${GO:-go}
REF=${REF:-$($GO run ./internal/testutil/refdir)} # the unpacked reference tree
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$GO test ./internal/chat/ -run '^$' -bench '^BenchmarkRender$' -cpu 1 -benchtime 2s >"$out/go.txt"
py=0
if python3 -c 'import jinja2' 2>/dev/null; then
  REF="$REF" bash internal/chat/bench_python.sh >"$out/py.txt" && py=1
else
  echo "python3-jinja2 not installed (apt-get install -y python3-jinja2): Python reference skipped" >&2
fi
awk -v py="$py" -v pyfile="$out/py.txt" '
  /^BenchmarkRender\// { m = substr($1, 17); sub(/-[0-9]+$/, "", m); ours[m] = 1e9 / $3; order[++n] = m }
  END {
    if (py) while ((getline line < pyfile) > 0) { split(line, f, " "); ref[f[2]] = f[3] }
    printf "%-10s %14s %14s %8s\n", "template", "ours render/s", "Python/s", "ratio"
    for (i = 1; i <= n; i++) { m = order[i]
      if (py && ref[m]) printf "%-10s %14.0f %14.0f %7.1fx\n", m, ours[m], ref[m], ours[m] / ref[m]
      else printf "%-10s %14.0f %14s %8s\n", m, ours[m], "-", "-" }
  }' "$out/go.txt"
