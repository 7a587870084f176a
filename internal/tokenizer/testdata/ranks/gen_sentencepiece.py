#!/usr/bin/env python3
"""Golden token ids of mistral-common's SentencePiece models, from the real
sentencepiece library.

    python3 -m venv v && v/bin/pip install -r requirements-sentencepiece.txt
    v/bin/python gen_sentencepiece.py "$(go run ./internal/testutil/refdir)"   # from the repository root

Writes, beside this script, the four SentencePiece models shipped inside the
mistral-common wheel (mistral_common/data/: tokenizer.model.v1 and the
instruct tokenizers v2, v3, v7), zstd-compressed as sp_<version>.model.zst,
and one sp_<version>.jsonl.gz each: a header naming the library versions,
then one {"line": i, "ids": [...]} per text of golden/tokens/qwen3.jsonl in
the reference tree, the ids of SentencePieceProcessor.encode(text) — what
mistral-common's SentencePieceTokenizer.encode(text, bos=False, eos=False)
returns.
"""
import gzip, json, os, subprocess, sys

import mistral_common
import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {
    "sp_v1": "tokenizer.model.v1",
    "sp_v2": "mistral_instruct_tokenizer_240216.model.v2",
    "sp_v3": "mistral_instruct_tokenizer_240323.model.v3",
    "sp_v7": "mistral_instruct_tokenizer_241114.model.v7",
}


def main():
    ref = sys.argv[1]
    texts = [json.loads(l)["text"] for l in open(os.path.join(ref, "golden", "tokens", "qwen3.jsonl"), encoding="utf-8")]
    data = os.path.join(os.path.dirname(mistral_common.__file__), "data")
    for name, file in MODELS.items():
        src = os.path.join(data, file)
        subprocess.run(["zstd", "-q", "-19", "-f", src, "-o", os.path.join(HERE, name + ".model.zst")], check=True)
        sp = spm.SentencePieceProcessor(model_file=src)
        path = os.path.join(HERE, name + ".jsonl.gz")
        with gzip.GzipFile(path, "wb", mtime=0) as f:
            head = {"model": name, "file": file, "sentencepiece": spm.__version__, "mistral_common": mistral_common.__version__, "texts": "golden/tokens/qwen3.jsonl"}
            f.write((json.dumps(head) + "\n").encode())
            for i, t in enumerate(texts):
                f.write((json.dumps({"line": i, "ids": sp.encode(t)}) + "\n").encode())
        print(path, len(texts))


if __name__ == "__main__":
    main()
