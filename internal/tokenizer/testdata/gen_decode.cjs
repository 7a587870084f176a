#!/usr/bin/env node
// Regenerates decode_golden.jsonl.gz: what the Rust library's decode(ids,
// skip_special_tokens=false) returns for each line of ../shared/golden/tokens,
// listed only where it differs from the line's text (the rest round-trip).
//
//   npm install --no-package-lock --prefix /tmp/oracle @anush008/tokenizers@0.6.0
//   NODE_PATH=/tmp/oracle/node_modules node gen_decode.cjs ../../../../shared | gzip -9n > decode_golden.jsonl.gz
const fs = require('fs');
const path = require('path');
const {Tokenizer} = require('@anush008/tokenizers');
const shared = process.argv[2];
const models = ['llama3', 'qwen3', 'deepseek_v3', 'gptoss', 'mistral7b', 'mistral7b-metaspace'];
(async () => {
  for (const m of models) {
    const tk = Tokenizer.fromFile(path.join(shared, 'models', m, 'tokenizer.json'));
    const lines = fs.readFileSync(path.join(shared, 'golden', 'tokens', m + '.jsonl'), 'utf8').split('\n').filter(Boolean);
    for (let i = 0; i < lines.length; i++) {
      const rec = JSON.parse(lines[i]);
      const decoded = await tk.decode(rec.ids, false);
      if (decoded !== rec.text) process.stdout.write(JSON.stringify({model: m, line: i + 1, decoded}) + '\n');
    }
  }
})();
