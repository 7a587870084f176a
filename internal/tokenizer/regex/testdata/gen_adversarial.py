#!/usr/bin/env python3
"""Writes adversarial inputs for the Split regexes as JSONL {"text": ...} on stdout.

Hand-picked edge cases, then random strings over an alphabet of characters that sit on the
boundaries the patterns care about (each class of each pattern, case folds, CR/LF, every White_Space
code point, Unicode 16.0 additions, ZWJ, emoji, controls). Fixed seed, so the output is stable.
Pipe it through oracle.cjs to get the reference spans:

    python3 gen_adversarial.py | NODE_PATH=/tmp/oracle/node_modules node oracle.cjs patterns.json --text \
        | gzip -9 > adversarial.jsonl.gz
"""
import json
import random

cases = [
    "a   b", "a  \n  b", "  \n\n  x", "x\r\n\r\n  y", "'s 'S 'ſ 'K 'RE 'Ll 'VE 'd 'M 'T", "don't we'll they're I've",
    "'ſt", "'ſs", "'", "''s", "a's", "A'S", "ABC'sdef", "HTTPServer", "ǅungla", "ǅ", "x\u0301y", "\u0301\u0301a",
    " \u0301", "\u0301 ", "123456789", "١٢٣٤", "12a34", " 1", "  1", "/path/to//x\n/", "a//\n\n", "?!\r\n\r\n",
    " ?!", "  ?!", "\t\tx", "\t x", "x \u00a0y", "x\u3000\u3000y", "\u2028\u2029", "\u0085x", "end  ", "end \n",
    "中文字符ひらがなカタカナ", "中a文", "é\u0301", "👨\u200d👩\u200d👧", "a\u200db", "\x01\x02a", "\x01", "!a", "!ab1",
    "#include<stdio.h>", "[x]", "\\n", "Ᲊᲊ", "\U00010940", "\U000323B0", "𝒜𝒷𝒸", "Ⅷ ⅷ", "½¾", "ｆｕｌｌ", "ＡＢＣ ｄｅｆ",
    "CamelCaseWord", "ALLCAPS's", "ʰʲ ʷ", "ǈǋ", "Σσς", "İı", "ß ẞ", "ﬆ ﬁ", "\r", "\n", " ", "", "a\r\nb",
]

alphabet = list("aAzZsStTrReEvVlLmMdDkK'\"/ \t\r\n\x0b\x0c0159.,;:!?-_()[]{}<>@#$%^&*+=|\\~`") + [
    "\u017f", "\u212a", "\u00a0", "\u0085", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f",
    "\u205f", "\u3000", "\u200b", "\u200c", "\u200d", "\ufeff", "\x00", "\x01", "\x7f", "\x9f",
    "é", "É", "ǅ", "ǈ", "ʰ", "ʼ", "ª", "中", "龥", "龦", "ぁ", "ゟ", "゠", "ァ", "ヿ", "〇", "한", "ا", "ب",
    "\u0301", "\u0300", "\u093f", "\u20dd", "\u0903", "١", "٢", "²", "½", "Ⅷ", "ⅷ", "①", "𝟘",
    "€", "£", "©", "®", "±", "×", "→", "∑", "😀", "👍", "🏽", "🇺", "«", "»", "—", "…", "、", "。", "·",
    "\u1c89", "\u1c8a", "\U00010940", "\U0001e5d0", "\U000323b0", "\U0010ffff", "\ue000", "\ufffd",
]

rng = random.Random(16)
out = list(cases)
for _ in range(12000):
    n = rng.randint(1, 16)
    out.append("".join(rng.choice(alphabet) for _ in range(n)))
# Longer strings, to reach runs that the short ones cannot (long spaces, digit groups, words with
# marks and contractions).
for _ in range(8000):
    n = rng.randint(17, 48)
    out.append("".join(rng.choice(alphabet) for _ in range(n)))
for t in out:
    print(json.dumps({"text": t}))
