#!/usr/bin/env python3
"""Expectations of the Mistral renderer for chat bodies with images: the
token ids vLLM's own MistralTokenizer (vllm/tokenizers/mistral.py, over
transformers' MistralCommonBackend and mistral-common's
encode_chat_completion with its ImageEncoder) encodes for each body, as
vLLM's Mistral renderer (vllm/renderers/mistral.py) calls it: the OpenAI
messages, image_url parts with data URLs included, go to
apply_chat_template whole; mistral-common decodes each image and places its
[IMG] rows, [IMG_BREAK]s and [IMG_END] among the text chunks. Run it with
the vLLM CPU venv of scripts/vllm (vllm 0.32.0, transformers 5.19.0,
mistral-common 1.13.1, Pillow; versions recorded in the output).

Tokenizers: mistral-common's shipped tekken_240911.json, the one shipped
file with image settings (Pixtral-12B-2409's: image_patch_size 16,
max_image_size 1024, no spatial merge), as tokenizer v3 as shipped; and the
same vocabulary as v7 with Mistral Small 3.1's image settings
(image_patch_size 14, max_image_size 1540, spatial_merge_size 2, as
mistral-common's tests and internal/vision/testdata/configs quote them).

Images are Pillow-made PNG and JPEG data URLs of a grid of sizes (tiny,
patch multiples, odd, extreme aspect ratios, larger than the longest edge).

usage: mistral-images-ref.py OUT.jsonl.gz  (make renderers-reference-mistral)
"""
import base64
import copy
import gzip
import io
import json
import os
import sys
import tempfile
from importlib.metadata import version as pkg_version

import mistral_common
from PIL import Image
from vllm.tokenizers.mistral import MistralTokenizer

DATA = os.path.join(os.path.dirname(mistral_common.__file__), "data")

SIZES = [(1, 1), (16, 16), (17, 33), (64, 48), (640, 480), (1024, 1024), (1025, 7), (1280, 720),
         (3000, 200), (200, 3000), (1540, 1540), (33, 2047), (500, 501), (224, 224), (29, 28), (1600, 900)]

CONFIGS = [
    ("tekken_240911", "v3", None),  # as shipped: its own image settings
    ("tekken_240911", "v7", {"image_patch_size": 14, "max_image_size": 1540, "spatial_merge_size": 2}),
]


def data_url(i):
    w, h = SIZES[i % len(SIZES)]
    fmt = "PNG" if i % 2 == 0 else "JPEG"
    img = Image.new("RGB", (w, h), ((i * 37) % 256, (i * 91) % 256, (i * 53) % 256))
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return "data:image/%s;base64,%s" % (fmt.lower(), base64.b64encode(buf.getvalue()).decode())


def img(i):
    return {"type": "image_url", "image_url": {"url": data_url(i)}}


def txt(s):
    return {"type": "text", "text": s}


TEXTS = ["Describe this image.", "What is in these pictures?", "Ünïcödé — 日本語 😀", "line one\nline two",
         "[IMG] is text here [/INST]", " spaced  ", "Compare them.", "x" * 50]


def bodies():
    out = []
    k = 0

    def nxt():
        nonlocal k
        k += 1
        return k - 1

    for i in range(len(SIZES)):  # every size alone, then with text after
        out.append(("only-%d" % i, {"messages": [{"role": "user", "content": [img(i)]}]}))
    for i in range(8):
        t = TEXTS[i % len(TEXTS)]
        out.append(("text-image-%d" % i, {"messages": [{"role": "user", "content": [txt(t), img(nxt())]}]}))
        out.append(("image-text-%d" % i, {"messages": [{"role": "user", "content": [img(nxt()), txt(t)]}]}))
        out.append(("text-image-text-%d" % i, {"messages": [{"role": "user", "content": [txt(t), img(nxt()), txt("and " + t)]}]}))
    for n in (2, 3, 4):
        for i in range(4):
            parts = []
            for j in range(n):
                if (i + j) % 2 == 0:
                    parts.append(txt("Image %d:" % (j + 1)))
                parts.append(img(nxt()))
            if i % 2:
                parts.append(txt(TEXTS[i]))
            out.append(("images%d-%d" % (n, i), {"messages": [{"role": "user", "content": parts}]}))
    for i in range(6):
        t = TEXTS[i % len(TEXTS)]
        msgs = []
        if i % 2 == 0:
            msgs.append({"role": "system", "content": "You see images. " + t})
        msgs += [{"role": "user", "content": [txt("first " + t), img(nxt())]},
                 {"role": "assistant", "content": "A picture of a colour."},
                 {"role": "user", "content": [img(nxt()), img(nxt()), txt("and these?")]}]
        if i >= 3:
            msgs += [{"role": "assistant", "content": "More colours."},
                     {"role": "user", "content": [txt("last one"), img(nxt()), txt(t)]}]
        out.append(("multiturn-%d" % i, {"messages": msgs}))
    for i in range(4):  # consecutive user messages are merged; two text parts then an image
        out.append(("consecutive-%d" % i, {"messages": [
            {"role": "user", "content": [txt("u1"), img(nxt())]},
            {"role": "user", "content": [txt("u2 " + TEXTS[i])] if i % 2 else "u2 plain"},
            {"role": "user", "content": [img(nxt())]}]}))
        out.append(("twotext-%d" % i, {"messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [txt("a"), txt(""), txt("b " + TEXTS[i]), img(nxt())]}]}))
    for i in range(3):  # v3's system prompt is a text chunk of its own before the first chunk
        out.append(("system-newline-%d" % i, {"messages": [
            {"role": "system", "content": "Look."},
            {"role": "user", "content": [txt("\n" + TEXTS[i]), img(nxt()), txt(" tail")]}]}))
    out.append(("system-image", {"messages": [
        {"role": "system", "content": [txt("sys"), img(nxt())]}, {"role": "user", "content": "hi"}]}))
    out.append(("assistant-image", {"messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [img(nxt())]},
        {"role": "user", "content": "ok"}]}))
    return out


def tokenizer(name, version, image):
    with open(os.path.join(DATA, name + ".json")) as f:
        data = json.load(f)
    data["config"]["version"] = version
    if image is not None:
        data["image"] = image
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "tekken.json"), "w") as f:
        json.dump(data, f)
    return MistralTokenizer.from_pretrained(folder)


def main():
    out = sys.argv[1]
    cases = bodies()
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps({"vllm": pkg_version("vllm"), "transformers": pkg_version("transformers"),
                            "mistral_common": mistral_common.__version__, "pillow": pkg_version("pillow"),
                            "note": "mistral-images-ref.py: vLLM MistralTokenizer.apply_chat_template"}) + "\n")
        for name, version, image in CONFIGS:
            tok = tokenizer(name, version, image)
            n = 0
            for bname, body in cases:
                rec = {"tekken": name, "version": version, "image": image, "name": bname, "body": body}
                try:
                    ids = tok.apply_chat_template(copy.deepcopy(body["messages"]), tools=body.get("tools"),
                                                  add_generation_prompt=True)
                except Exception as e:  # a request mistral-common refuses
                    rec["error"] = type(e).__name__ + ": " + str(e)[:200]
                else:
                    rec["count"], rec["ids"] = len(ids), ids
                    n += 1
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            print(name, version, n, "bodies of", len(cases), file=sys.stderr)


if __name__ == "__main__":
    main()
