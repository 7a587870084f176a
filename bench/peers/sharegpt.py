"""Writes a small local ShareGPT file (no download) for `vllm bench serve
--dataset-name sharegpt`: N two-turn dialogs cut from the Moby Dick corpus
islkit embeds (internal/corpus), human turns of 60 to 400 words.

    sharegpt.py CORPUS.txt.gz N OUT.json
"""
import gzip
import json
import random
import sys

words = gzip.open(sys.argv[1], "rt", encoding="utf-8").read().split()
rng = random.Random(1)
dialogs = []
for i in range(int(sys.argv[2])):
    def cut(lo, hi):
        n = rng.randint(lo, hi)
        at = rng.randrange(0, len(words) - n)
        return " ".join(words[at:at + n])
    dialogs.append({"id": "d%d" % i, "conversations": [
        {"from": "human", "value": cut(60, 400)},
        {"from": "gpt", "value": cut(20, 120)}]})
json.dump(dialogs, open(sys.argv[3], "w"))
