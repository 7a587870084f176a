"""Writes the token ids of the golden texts as transformers 5 builds a
Llama-class tokenizer (huggingface/transformers#45488), for
internal/modelsrc's TestTransformers5Rebuild.

    transformers5_ids.py MODELS_DIR GOLDEN_TOKENS_DIR OUT.jsonl MODEL...

For each MODEL, AutoTokenizer loads MODELS_DIR/MODEL (the conformance
folder, no config.json: the class tokenizer_config.json names decides)
and encodes each text of GOLDEN_TOKENS_DIR/MODEL.jsonl without special
tokens; the lines whose ids differ from the golden ones (tokenizer.json's,
the Rust library's) are written, the rest are equal (the file's header
counts them). A few texts with special tokens in them are encoded with
them and always written.
"""
import json
import os
import sys

import transformers
from transformers import AutoTokenizer

models_dir, golden_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
extra = ["<s>[INST] hi [/INST] there</s> [INST] again [/INST]", "</s>Hello", "</s> Hello", "a</s>b", "<unk>x",
         "Hello world"]
lines, same = [], {}
for model in sys.argv[4:]:
    tok = AutoTokenizer.from_pretrained(os.path.join(models_dir, model))
    print("%s: %s" % (model, type(tok).__name__), file=sys.stderr)
    same[model] = 0
    with open(os.path.join(golden_dir, model + ".jsonl"), encoding="utf-8") as g:
        golden = [json.loads(line) for line in g]
    for gl in golden:
        ids = tok.encode(gl["text"], add_special_tokens=False)
        if ids == gl["ids"]:
            same[model] += 1
            continue
        lines.append({"model": model, "text": gl["text"], "special": False, "ids": ids})
    for t in extra:
        lines.append({"model": model, "text": t, "special": True, "ids": tok.encode(t, add_special_tokens=True)})
with open(out, "w", encoding="utf-8") as f:
    f.write(json.dumps({"kind": "islkit.transformers5-ids", "transformers": transformers.__version__,
                        "same_as_golden": same}) + "\n")
    for line in lines:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")
