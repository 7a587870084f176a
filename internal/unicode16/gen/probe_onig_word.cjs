// Probes Oniguruma's \w (through the HuggingFace tokenizers Node binding, see the shared
// oracle/tokenize_ref.cjs for setup) for every code point, plus the (?i) folds of the contraction
// letters and a few syntax facts. word.json's "onig\\w" is this output's "\\w" field:
//   NODE_PATH=/tmp/oracle/node_modules node probe_onig_word.cjs > probe.json
const {Tokenizer} = require('@anush008/tokenizers');
function pretok(pattern, behavior) {
  const json = {version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: {type: 'Split', pattern: {Regex: pattern}, behavior, invert: false},
    post_processor: null, decoder: null, model: {type: 'WordLevel', vocab: {'[UNK]': 0}, unk_token: '[UNK]'}};
  return Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
}
// members returns the code points matched (as single chars) by a one-char pattern.
function members(pattern) {
  const iso = pretok(pattern, 'Isolated'), rem = pretok(pattern, 'Removed');
  const cps = [];
  for (let c = 0; c <= 0x10FFFF; c++) if (c < 0xD800 || c > 0xDFFF) cps.push(c);
  const res = [];
  for (let i = 0; i < cps.length; i += 65536) {
    const chunk = cps.slice(i, i + 65536);
    const s = String.fromCodePoint(...chunk);
    const covered = new Uint8Array(chunk.length);
    for (const [, [a, b]] of rem.preTokenizeString(s)) for (let k = a; k < b; k++) covered[k] = 1;
    for (let k = 0; k < chunk.length; k++) if (!covered[k]) res.push(chunk[k]);
  }
  return res;
}
function ranges(list) { const r = []; for (const c of list) { if (r.length && r[r.length-1][1] === c-1) r[r.length-1][1] = c; else r.push([c, c]); } return r; }
const out = {};
out['\\w'] = ranges(members('\\w'));
for (const l of 'strevmld') out['(?i:' + l + ')'] = members('(?i:' + l + ')');
const iso = pretok("(?i:'s|'t|'re|'ve|'m|'ll|'d)", 'Isolated');
for (const t of ["'ſ", "'\u212A", "'S", "'RE", "'ʀe"]) out['case ' + t] = iso.preTokenizeString(t);
for (const [p, t] of [['(?i:ss)', 'ß'], ['(?i:st)', '\uFB06'], ['(?i:ß)', 'ss'], ['a*', 'baa'], ['', 'abc'], ['x*', 'axxb'],['\\b', 'ab cd'], ['^a', 'a\na'], ['a$', 'a\na'], ['.', 'a\nb'], ['\\d', '١2'], ['\\h', 'a1 '], ['(?i)k', '\u212Ak']]) {
  out[p + ' on ' + t] = [pretok(p, 'Isolated').preTokenizeString(t), pretok(p, 'Removed').preTokenizeString(t)];
}
console.log(JSON.stringify(out));
