"""Writes a tokenizer folder as the transformers inside vLLM builds it.

    transformers5_tokenizer.py SRC_DIR OUT_DIR

transformers 5, which vLLM 0.32 requires (>=5.16.1,<5.20), does not use a
tokenizer.json as it is when tokenizer_config.json names a class with its
own pipeline: LlamaTokenizer(Fast) keeps the vocabulary and merges and
replaces the normalizer and pre-tokenizer with a Metaspace one
(huggingface/transformers#45488), unless config.json's model_type is in
MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS (deepseek_v3 is; llama and
mistral are not; SRC_DIR needs the model's config.json for that). Mistral 7B v0.1 and Llama 2 folders then count one token
fewer per earlier assistant turn than their tokenizer.json. save_pretrained
writes the tokenizer transformers built; handed to islkit (--tokenizer
OUT_DIR), islkit counts as that vLLM does. Files save_pretrained does not
write (the chat template, config.json) are copied as they are.
"""
import json
import os
import shutil
import sys

from transformers import AutoTokenizer

src, out = sys.argv[1], sys.argv[2]
tok = AutoTokenizer.from_pretrained(src)
tok.save_pretrained(out)
for name in os.listdir(src):
    if not os.path.exists(os.path.join(out, name)) and os.path.isfile(os.path.join(src, name)):
        shutil.copy(os.path.join(src, name), os.path.join(out, name))
d = json.load(open(os.path.join(out, "tokenizer.json"), encoding="utf-8"))
print("%s: %s; normalizer %s, pre_tokenizer %s" % (out, type(tok).__name__, json.dumps(d.get("normalizer")),
                                                   json.dumps(d.get("pre_tokenizer"))), file=sys.stderr)
