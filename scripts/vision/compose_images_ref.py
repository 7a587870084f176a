#!/usr/bin/env python3
"""Counts request bodies with images as vLLM does for Qwen2.5-VL, from
transformers and Pillow alone (no islkit code): the reference of
TestImagesReference (internal/compose).

For each line {"case", "endpoint", "body_sha256", "images", "body"} of the
bodies file (written by `go test ./internal/compose -run TestImagesReference
-args -image-bodies FILE`) it prints {"case", "body_sha256", "images",
"ref_tokens"}:

- a Responses body is made the chat messages vLLM makes of it
  (instructions first as a system message; each message item's parts);
- each message's content is shaped as vLLM's _parse_chat_message_content
  does for a template that takes string content (Qwen3's): its text parts
  joined with "\\n", and for its images the model's placeholder
  "<|vision_start|><|image_pad|><|vision_end|>" in front, each followed by
  "\\n" (_get_full_multimodal_text_prompt, less the placeholders the text
  already holds);
- the messages are rendered by transformers' apply_chat_template (Python
  Jinja2) with add_generation_prompt=True;
- every image is decoded by Pillow from its data URL and sized by
  transformers' Qwen2VLImageProcessorPil (no torch) from the model's
  preprocessor_config.json; each "<|image_pad|>" the render holds is
  replaced, in order and never rescanned, by Qwen2_5_VLProcessor's
  replace_image_token for its image (as ProcessorMixin.__call__ does);
- the text is encoded by the tokenizer (Rust tokenizers through
  transformers) without special tokens, as vLLM's chat endpoint does.

usage: compose_images_ref.py MODEL_DIR BODIES.jsonl > counts.jsonl
"""
import base64
import io
import json
import sys

from PIL import Image
from transformers import AutoTokenizer
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
from transformers.models.qwen2_5_vl.processing_qwen2_5_vl import Qwen2_5_VLProcessor

PLACEHOLDER = "<|vision_start|><|image_pad|><|vision_end|>"
IMAGE_TOKEN = "<|image_pad|>"


def load_image(url):
    head, data = url.split(",", 1)
    assert head.startswith("data:image/") and head.endswith(";base64"), head
    img = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
    img.load()
    return img


def shape(content, images):
    """vLLM's string-format content of one message; appends its images."""
    if isinstance(content, str):
        return content
    texts, n = [], 0
    for part in content:
        t = part["type"]
        if t in ("text", "input_text", "output_text"):
            if part["text"]:
                texts.append(part["text"])
        elif t == "image_url":
            images.append(part["image_url"]["url"])
            n += 1
        elif t == "input_image":
            images.append(part["image_url"])
            n += 1
        else:
            raise ValueError("unexpected part " + t)
    text = "\n".join(texts)
    if n == 0:
        return text
    missing = n - text.count(PLACEHOLDER)
    assert missing >= 0
    return "\n".join([PLACEHOLDER] * missing + [text])


def messages_of(endpoint, body, images):
    if endpoint == "chat":
        msgs = body["messages"]
    else:
        msgs = []
        if "instructions" in body:
            msgs.append({"role": "system", "content": body["instructions"]})
        for item in body["input"]:
            assert item.get("type", "message") == "message"
            msgs.append({"role": item["role"], "content": item["content"]})
    return [{"role": m["role"], "content": shape(m["content"], images)} for m in msgs]


def image_processor(model_dir):
    cfg = json.load(open(model_dir + "/preprocessor_config.json"))
    drop = {"image_processor_type", "processor_class", "video_sampling"}
    return Qwen2VLImageProcessorPil(**{k: v for k, v in cfg.items() if k not in drop and v is not None})


def main():
    model_dir, bodies = sys.argv[1], sys.argv[2]
    tok = AutoTokenizer.from_pretrained(model_dir)
    ip = image_processor(model_dir)
    # The processor's replace_image_token alone: its __init__ wants a
    # video processor, which needs torch.
    proc = object.__new__(Qwen2_5_VLProcessor)
    proc.__dict__.update(image_processor=ip, image_token=IMAGE_TOKEN)
    for line in open(bodies, encoding="utf-8"):
        case = json.loads(line)
        images = []
        msgs = messages_of(case["endpoint"], case["body"], images)
        text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        if images:
            out = ip([load_image(u) for u in images])
            pieces = text.split(IMAGE_TOKEN)
            assert len(pieces) == len(images) + 1, (case["case"], len(pieces) - 1, len(images))
            text = pieces[0] + "".join(proc.replace_image_token(out, i) + pieces[i + 1] for i in range(len(images)))
        ids = tok(text, add_special_tokens=False)["input_ids"]
        print(json.dumps({"case": case["case"], "body_sha256": case["body_sha256"], "images": len(images), "ref_tokens": len(ids)}))


if __name__ == "__main__":
    main()
