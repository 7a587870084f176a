#!/usr/bin/env bash
# make notebook-check: runs docs/notebooks/sweep.ipynb on a fresh sweep.
# Builds the tools, makes a virtual environment with the pinned
# docs/notebooks/requirements.txt (pandas, pyarrow, matplotlib, nbclient;
# remade when the file changes), records a concurrency sweep against
# islkit-testserver (scripts/export-sweep.sh), measures it with
# --export to CSV and to Parquet and --summary-json, and executes the
# notebook with nbclient: it fails when any figure recomputed from the
# tables differs from the summary's. Not part of `make test` (CI installs
# no Python packages). Writes under OUT (default .bench/notebook): the
# tables, the executed notebook, sweep-curve.png.
set -euo pipefail
GO=${GO:-go}
VENV=${VENV:-.bench/notebook-venv}
OUT=${OUT:-.bench/notebook}
REQ=docs/notebooks/requirements.txt
SLO=${SLO:-ttft=8ms,tpot=0.6ms,e2e=25ms}

mkdir -p "$OUT/bin"
"$GO" build -trimpath -o "$OUT/bin/" ./cmd/probe ./cmd/compose ./cmd/send ./cmd/measure ./cmd/islkit-testserver
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQ" "$VENV/requirements.txt"; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  nice -n 10 "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$VENV/requirements.txt"
fi

BIN="$OUT/bin" scripts/export-sweep.sh >"$OUT/sweep.jsonl"
for ext in csv parquet; do
  "$OUT/bin/measure" --apply-chat-template --slo "$SLO" --percentiles 25,99.9 \
    --summary-json "$OUT/sweep.summary.json" --export "$OUT/sweep.$ext" <"$OUT/sweep.jsonl" >/dev/null
done

ISLKIT_EXPORT="$OUT/sweep" ISLKIT_SUMMARY="$OUT/sweep.summary.json" ISLKIT_OUT="$OUT" MPLBACKEND=Agg \
  "$VENV/bin/python" - docs/notebooks/sweep.ipynb "$OUT/sweep.executed.ipynb" <<'PY'
import sys
import nbclient
import nbformat

src, dst = sys.argv[1], sys.argv[2]
nb = nbformat.read(src, as_version=4)
try:
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()
finally:
    nbformat.write(nb, dst)
for cell in nb.cells:
    for out in cell.get("outputs", []):
        if out.get("name") == "stdout":
            sys.stdout.write(out["text"])
print(f"notebook-check: {src} ran; executed copy in {dst}")
PY
