#!/usr/bin/env bash
# The README's main command: the whole pipeline on the embedded default
# model (Qwen3), offline. Writes the measured requests to $OUT (default
# demo-requests.jsonl) and the summary table to stderr; SUMMARY_JSON=FILE
# also writes the summary as JSON (the end-to-end test reads it); SERVER
# picks measure's server profile (default vllm).
set -euo pipefail
BIN=${BIN:-bin}
OUT=${OUT:-demo-requests.jsonl}
"$BIN/probe" --apply-chat-template --cache-bust first_turn_prefix --now 2025-07-10T12:00:00 \
  | "$BIN/compose" --isl 1000 --osl 100 --conversations 50 --turns 3 --seed 1 --model Qwen/Qwen3-8B \
  | "$BIN/send" --dry-run \
  | "$BIN/measure" --apply-chat-template --server "${SERVER:-vllm}" --summary ${SUMMARY_JSON:+--summary-json "$SUMMARY_JSON"} >"$OUT"
