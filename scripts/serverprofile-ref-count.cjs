#!/usr/bin/env node
// Counts the prompts serverprofile-ref.py wrote with the real HuggingFace
// tokenizers (Rust, through the @anush008/tokenizers Node binding):
// tokens = encode(text, add_special_tokens) + encode(bare) when AIPerf
// counts tool texts bare on top. Lines without "text" pass through.
//
//   NODE_PATH=DIR/node_modules node serverprofile-ref-count.cjs MODELS_DIR < rendered.jsonl
process.env.RAYON_NUM_THREADS = process.env.RAYON_NUM_THREADS || '1';
process.env.TOKENIZERS_PARALLELISM = 'false';
const path = require('path');
const readline = require('readline');
const {Tokenizer} = require('@anush008/tokenizers');

async function main() {
  const dir = process.argv[2];
  if (!dir) { console.error('usage: serverprofile-ref-count.cjs MODELS_DIR < rendered.jsonl'); process.exit(2); }
  const toks = {};
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  for await (const line of rl) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line);
    const out = {case: rec.case, model: rec.model, profile: rec.profile};
    if (rec.text === undefined) {
      out.outcome = rec.outcome; out.reason = rec.reason;
    } else {
      const tk = toks[rec.model] || (toks[rec.model] = Tokenizer.fromFile(path.join(dir, rec.model, 'tokenizer.json')));
      let n = (await tk.encode(rec.text, null, {addSpecialTokens: !!rec.add_special_tokens})).getIds().length;
      if (rec.bare) n += (await tk.encode(rec.bare, null, {addSpecialTokens: false})).getIds().length;
      out.outcome = 'tokens'; out.tokens = n;
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
}
main().catch(e => { console.error(e); process.exit(1); });
