#!/usr/bin/env python3
"""The reference counts of compose's requests with images for a
Mistral-format model (internal/compose TestImagesMistral): each request
body TestImagesMistral writes (-mistral-image-bodies FILE) encoded by vLLM
0.32.0's own MistralTokenizer.apply_chat_template (mistral-common 1.13.1's
encode_chat_completion and ImageEncoder decode every data URL with
Pillow), over tekken_240911 with the image settings of the case's
configuration (the list of mistral_images_test.go's mistralComposeConfigs).
Run it with the vLLM CPU venv of scripts/vllm
(scripts/renderers/requirements-mistral.txt).

usage: go test ./internal/compose/ -run TestImagesMistral -mistral-image-bodies /tmp/b.jsonl
       mistral-compose-images-ref.py /tmp/b.jsonl internal/compose/testdata/mistral-images-reference.jsonl.gz
"""
import gzip
import json
import sys

from importlib.metadata import version as pkg_version

import mistral_common

sys.path.insert(0, __file__.rsplit("/", 1)[0])
mir = __import__("mistral-images-ref")

CONFIGS = {
    "pixtral12b-v3": ("tekken_240911", "v3", None),
    "mistral-small-3.1-v7": ("tekken_240911", "v7", {"image_patch_size": 14, "max_image_size": 1540, "spatial_merge_size": 2}),
}


def main():
    src, out = sys.argv[1], sys.argv[2]
    toks = {k: mir.tokenizer(*v) for k, v in CONFIGS.items()}
    n = 0
    with open(src) as f, gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as g:
        for line in f:
            rec = json.loads(line)
            body = rec["body"]
            tok = toks[rec["case"].split("/", 1)[0]]
            ids = tok.apply_chat_template(body["messages"], tools=body.get("tools"), add_generation_prompt=True)
            g.write(json.dumps({"case": rec["case"], "body_sha256": rec["body_sha256"], "ref_tokens": len(ids),
                                "target": rec["target"]}) + "\n")
            n += 1
    print(n, "bodies; vllm", pkg_version("vllm"), "mistral_common", mistral_common.__version__, file=sys.stderr)


if __name__ == "__main__":
    main()
