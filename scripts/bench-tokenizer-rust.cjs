#!/usr/bin/env node
// Times the Rust HuggingFace tokenizers library (through the
// @anush008/tokenizers Node binding, the reference in testdata/conformance/oracle) on
// the same texts as `go test -bench` in internal/tokenizer: every "text" of
// golden/tokens/qwen3.jsonl of the reference tree. One thread (RAYON_NUM_THREADS=1).
// Prints one line per model: model, load seconds, sequential MB/s,
// batched MB/s, tokens.
//
//   NODE_PATH=.bench/oracle/node_modules node scripts/bench-tokenizer-rust.cjs "$(go run ./internal/testutil/refdir)" llama3 qwen3 ...
process.env.RAYON_NUM_THREADS = '1';
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');
const {Tokenizer} = require('@anush008/tokenizers');

async function main() {
  const [shared, ...models] = process.argv.slice(2);
  const texts = fs.readFileSync(path.join(shared, 'golden', 'tokens', 'qwen3.jsonl'), 'utf8')
    .split('\n').filter(Boolean).map((l) => JSON.parse(l).text);
  const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
  const opts = {addSpecialTokens: false};
  for (const m of models) {
    const file = path.join(shared, 'models', m, 'tokenizer.json');
    // Load: the median of five, as the Go side loads several times.
    const loads = [];
    let tk;
    for (let i = 0; i < 5; i++) {
      const s = process.hrtime.bigint();
      tk = Tokenizer.fromFile(file);
      loads.push(Number(process.hrtime.bigint() - s) / 1e9);
    }
    loads.sort((a, b) => a - b);
    const load = loads[2];
    let t0;
    // Warm up once (the Rust word cache fills), then time like Go does.
    for (const t of texts) await tk.encode(t, null, opts);
    t0 = process.hrtime.bigint();
    let tokens = 0;
    for (const t of texts) tokens += (await tk.encode(t, null, opts)).getIds().length;
    const seq = Number(process.hrtime.bigint() - t0) / 1e9;
    t0 = process.hrtime.bigint();
    const encs = await tk.encodeBatch(texts, opts);
    const batch = Number(process.hrtime.bigint() - t0) / 1e9;
    let btokens = 0;
    for (const e of encs) btokens += e.getIds().length;
    if (btokens !== tokens) throw new Error(`${m}: batch gave ${btokens} tokens, sequential ${tokens}`);
    console.log([m, load.toFixed(3), (bytes / seq / 1e6).toFixed(2), (bytes / batch / 1e6).toFixed(2), tokens].join(' '));
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
