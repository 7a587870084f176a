#!/usr/bin/env node
// Reference counter for endpoint_ref.py's output: the real HuggingFace `tokenizers` library
// (Rust 0.22.x) through the @anush008/tokenizers Node binding.
//
//   NODE_PATH=DIR/node_modules node count_ref.cjs TOKENIZER.json < prepared.jsonl > counts.txt
//
// Each input line is {"segments": [{"text", "special"}], "ids": N} or {"error": ...}; each output
// line is the count (the segments encoded, with the post-processor's special tokens where
// "special", plus N) or "error: ..." -- one line per input line, in order.
process.env.RAYON_NUM_THREADS = process.env.RAYON_NUM_THREADS || '1';
process.env.TOKENIZERS_PARALLELISM = 'false';
const path = require('path');
const readline = require('readline');
let binding;
try { binding = require('@anush008/tokenizers'); }  // found through NODE_PATH
catch (e) { binding = require(path.join(__dirname, 'node_modules', '@anush008', 'tokenizers')); }
const {Tokenizer} = binding;

async function main() {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: count_ref.cjs TOKENIZER.json < prepared.jsonl');
    process.exit(2);
  }
  const tk = Tokenizer.fromFile(file);
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  const out = [];
  for await (const line of rl) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line);
    if (rec.error) {
      out.push('error: ' + rec.error.replace(/\n/g, ' '));
      continue;
    }
    let n = rec.ids || 0;
    for (const s of rec.segments) {
      n += (await tk.encode(s.text, null, {addSpecialTokens: !!s.special})).getIds().length;
    }
    out.push(String(n));
  }
  if (out.length) process.stdout.write(out.join('\n') + '\n');
}
main().catch(e => { console.error(e); process.exit(1); });
