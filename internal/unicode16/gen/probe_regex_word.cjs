// word.json's "regex\\w" is this output's "regex\\w" field (its "regex\\s" equals \s of
// unicode16-classes.json):  NODE_PATH=/tmp/oracle/node_modules node probe_regex_word.cjs
// Probes the Whitespace pre-tokenizer (Rust regex crate \w and \s) for every code point.
const {whitespacePreTokenizer} = require('@anush008/tokenizers');
const ws = whitespacePreTokenizer();
const word = [], space = [];
const cps = [];
for (let c = 0; c <= 0x10FFFF; c++) if (c < 0xD800 || c > 0xDFFF) cps.push(c);
for (let i = 0; i < cps.length; i += 20000) {
  const chunk = cps.slice(i, i + 20000);
  const s = chunk.map(c => 'a' + String.fromCodePoint(c) + '!').join('');
  const starts = new Map();
  for (const [, [a, b]] of ws.preTokenizeString(s)) starts.set(a, b);
  chunk.forEach((c, k) => {
    if (starts.get(3 * k) === 3 * k + 2) word.push(c);
    else if (!starts.has(3 * k + 1)) space.push(c);
  });
}
function ranges(list) { const r = []; for (const c of list) { if (r.length && r[r.length-1][1] === c-1) r[r.length-1][1] = c; else r.push([c, c]); } return r; }
console.log(JSON.stringify({'regex\\w': ranges(word), 'regex\\s': ranges(space)}));
