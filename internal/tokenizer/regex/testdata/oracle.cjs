#!/usr/bin/env node
// Oracle for the Split regexes: runs the real HuggingFace tokenizers (Rust 0.22, Oniguruma) through
// the @anush008/tokenizers Node binding and prints the match spans of each pattern. Not run by
// `go test`; it produced the files beside it. Setup, once:
//
//   npm install --no-package-lock --prefix /tmp/oracle @anush008/tokenizers@0.6.0
//   NODE_PATH=/tmp/oracle/node_modules node oracle.cjs patterns.json [--hash] < texts.jsonl > out.jsonl
//
// patterns.json is a JSON array of pattern strings; the entry "<Whitespace>" stands for the
// Whitespace pre-tokenizer, whose `\w+|[^\w\s]+` runs on the Rust regex crate, not Oniguruma
// (its \w holds U+200D, Oniguruma's does not), so its pieces are taken as they come. Each input line is {"text": ...}; each output
// line is {"text"?, "spans": [[[start,end],...] per pattern]} with UTF-8 byte offsets, or with
// --hash {"hash": [hex per pattern]} where hex is the first 16 hex digits of SHA-256 over
// "start,end;" for each span. Matches are recovered as the pieces of an Isolated split that are
// not pieces of a Removed split (the gaps); empty matches are invisible this way, and none of the
// patterns tested can match empty.
const fs = require('fs');
const crypto = require('crypto');
const readline = require('readline');
const {Tokenizer, whitespacePreTokenizer} = require('@anush008/tokenizers');

function pretok(pattern, behavior) {
  const json = {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: {type: 'Split', pattern: {Regex: pattern}, behavior, invert: false},
    post_processor: null, decoder: null,
    model: {type: 'WordLevel', vocab: {'[UNK]': 0}, unk_token: '[UNK]'},
  };
  return Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
}

// charToByte maps code point offsets to UTF-8 byte offsets of s.
function charToByte(s) {
  const m = [0];
  let b = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0);
    b += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    m.push(b);
  }
  return m;
}

async function main() {
  const patterns = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const hash = process.argv.includes('--hash');
  const keepText = process.argv.includes('--text');
  const pts = patterns.map(p => p === '<Whitespace>' ? [whitespacePreTokenizer(), null] : [pretok(p, 'Isolated'), pretok(p, 'Removed')]);
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  for await (const line of rl) {
    if (!line.trim()) continue;
    const text = JSON.parse(line).text;
    const m = charToByte(text);
    const out = [];
    for (const [iso, rem] of pts) {
      const gaps = new Set(rem ? rem.preTokenizeString(text).map(([, [s, e]]) => s + ',' + e) : []);
      const spans = iso.preTokenizeString(text).filter(([, [s, e]]) => !gaps.has(s + ',' + e))
        .map(([, [s, e]]) => [m[s], m[e]]);
      out.push(spans);
    }
    const rec = {};
    if (keepText) rec.text = text;
    if (hash) {
      rec.hash = out.map(sp => crypto.createHash('sha256').update(sp.map(([s, e]) => s + ',' + e + ';').join('')).digest('hex').slice(0, 16));
    } else {
      rec.spans = out;
    }
    process.stdout.write(JSON.stringify(rec) + '\n');
  }
}
main().catch(e => { console.error(e); process.exit(1); });
