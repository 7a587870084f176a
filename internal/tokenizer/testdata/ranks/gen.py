#!/usr/bin/env python3
"""Golden token ids of tiktoken-format vocabularies, from the real libraries.

    python3 -m venv v && v/bin/pip install -r requirements.txt
    v/bin/python gen.py "$(go run ./internal/testutil/refdir)"   # from the repository root

Writes, beside this script, one <model>.jsonl.gz per model: a header line
naming the library versions, then one {"line": i, "ids": [...]} per text of
golden/tokens/qwen3.jsonl in the reference tree (the corpus every golden token
file encodes: edge cases, corpus chunks, random strings).

- tekken_240718, tekken_240911: the tekken.json files shipped inside the
  mistral-common wheel (mistral_common/data/), copied here zstd-compressed;
  ids of Tekkenizer.encode(text, bos=False, eos=False).
- o200k_base: tiktoken fetches its ranks from the network; here they are
  rebuilt from the gpt-oss tokenizer.json of the reference tree (its first
  199998 vocabulary entries, byte-level unmapped, are o200k_base's ranks)
  and the file is checked against the SHA-256 tiktoken pins for
  o200k_base.tiktoken, so the ranks are tiktoken's own. Ids of
  encode(text, allowed_special="all") with o200k_base's pattern and special
  tokens.
"""
import base64, gzip, hashlib, json, os, shutil, subprocess, sys

import tiktoken
import tiktoken_ext.openai_public as openai_public
import mistral_common
from mistral_common.tokens.tokenizers.tekken import Tekkenizer

HERE = os.path.dirname(os.path.abspath(__file__))
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def byte_decoder():
    # GPT-2's bytes_to_unicode, reversed.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def o200k_ranks_file(ref):
    """The text of o200k_base.tiktoken rebuilt from gpt-oss's vocabulary."""
    vocab = json.load(open(os.path.join(ref, "models", "gptoss", "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
    dec = byte_decoder()
    by_id = sorted((i, t) for t, i in vocab.items() if i < 199998)
    lines = [base64.b64encode(bytes(dec[c] for c in t)).decode() + " " + str(i) for i, t in by_id]
    text = "\n".join(lines) + "\n"
    got = hashlib.sha256(text.encode()).hexdigest()
    if got != O200K_SHA256:
        sys.exit(f"o200k ranks rebuilt from gpt-oss: SHA-256 {got}, tiktoken pins {O200K_SHA256}")
    return text


def write(name, encode, texts):
    path = os.path.join(HERE, name + ".jsonl.gz")
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        head = {"model": name, "tiktoken": tiktoken.__version__, "mistral_common": mistral_common.__version__, "texts": "golden/tokens/qwen3.jsonl"}
        f.write((json.dumps(head) + "\n").encode())
        for i, t in enumerate(texts):
            f.write((json.dumps({"line": i, "ids": encode(t)}) + "\n").encode())
    print(path, len(texts))


def main():
    ref = sys.argv[1]
    texts = [json.loads(l)["text"] for l in open(os.path.join(ref, "golden", "tokens", "qwen3.jsonl"), encoding="utf-8")]
    data = os.path.join(os.path.dirname(mistral_common.__file__), "data")
    for name in ("tekken_240718", "tekken_240911"):
        src = os.path.join(data, name + ".json")
        subprocess.run(["zstd", "-q", "-19", "--long=27", "-f", src, "-o", os.path.join(HERE, name + ".json.zst")], check=True)
        tk = Tekkenizer.from_file(src)
        write(name, lambda t: tk.encode(t, bos=False, eos=False), texts)
    # o200k_base() would fetch its ranks: only its pattern and special
    # tokens are taken from it, the ranks are the rebuilt ones.
    openai_public.load_tiktoken_bpe = lambda *a, **k: {}
    spec = openai_public.o200k_base()
    ranks = {base64.b64decode(tok): int(r) for tok, r in (l.split() for l in o200k_ranks_file(ref).splitlines() if l)}
    enc = tiktoken.Encoding(name="o200k_base", pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens=spec["special_tokens"])
    write("o200k_base", lambda t: enc.encode(t, allowed_special="all"), texts)


if __name__ == "__main__":
    main()
