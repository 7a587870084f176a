#!/usr/bin/env bash
# Cross-checks internal/hub against Python's huggingface_hub itself, through
# the loopback stand-in Hub: Python's cache read by islkit offline, islkit's
# read by Python offline, and the two caches identical link for link.
# Needs $PYTHON (default python3) with huggingface_hub importable: `pip
# install huggingface_hub`, or PYTHONPATH=<huggingface_hub checkout>/src with
# `apt-get install python3-httpx python3-filelock python3-tqdm python3-fsspec
# python3-packaging python3-yaml`. Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
"${PYTHON:-python3}" -c 'import huggingface_hub; print("huggingface_hub", huggingface_hub.__version__)'
exec "${GO:-go}" test -count=1 -tags hfpython -run 'PythonHuggingfaceHub$' -v ./internal/hub/
