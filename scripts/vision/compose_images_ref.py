#!/usr/bin/env python3
"""Counts request bodies with images as vLLM does, per vision-language
family, from transformers, Pillow and mistral-common's neighbours alone (no
islkit code): the reference of TestImagesReference (internal/compose) and
of measure's count of the same bodies.

    compose_images_ref.py folder CONFIG QWEN3_DIR OUT_DIR
        writes the stand-in model folder of family CONFIG (its entry in
        internal/vision/testdata/standin/families.json): Qwen3's
        tokenizer.json with the family's image tokens appended as special
        added tokens (in tokenizer_config.json's added_tokens_decoder too),
        Qwen3's chat template, and
        the family's processor configuration files.
    compose_images_ref.py count CONFIG MODEL_DIR BODIES.jsonl [openai] > counts.jsonl
        (openai: the model folder's own template iterates over the content
        parts, as Gemma 3's; the messages are shaped as vLLM shapes them for
        it, each image a {"type": "image"} item in its place)

For each line {"case", "endpoint", "body_sha256", "images", "body"} of the
bodies file (written by `go test ./internal/compose -run TestImagesReference
-args -image-bodies DIR`) `count` prints {"case", "body_sha256", "images",
"ref_tokens"}:

- a Responses body is made the chat messages vLLM makes of it
  (instructions first as a system message; each message item's parts);
- each message's content is shaped as vLLM's _parse_chat_message_content
  does for a template that takes string content (Qwen3's): its text parts
  joined with "\\n", and for its images the placeholder the model class's
  get_placeholder_str gives (vllm/model_executor/models/*.py, 0.32: e.g.
  "<|vision_start|><|image_pad|><|vision_end|>" for the Qwen-VL families,
  "<start_of_image>" for Gemma 3, "<IMG_CONTEXT>" for InternVL3 in
  transformers' format) in front, each followed by "\\n"
  (_get_full_multimodal_text_prompt, less the placeholders the text
  already holds);
- the messages are rendered by transformers' apply_chat_template (Python
  Jinja2) with add_generation_prompt=True;
- every image is decoded by Pillow from its data URL and run through the
  family's transformers image processor (the PIL ones, no torch; Llama 4's
  canvas functions over llama4_ref.py's numpy stand-in) with the model's
  preprocessor_config.json; each occurrence of the token the family's
  processor replaces (its image_token, or Gemma 3's boi_token) is replaced,
  in order and never rescanned, by the model processor's own
  replace_image_token for its image (Llama 4: _prompt_split_image), as
  ProcessorMixin.__call__ does;
- the text is encoded by the tokenizer (Rust tokenizers through
  transformers) without special tokens for a chat body, with them for a
  Responses body, as vLLM's two endpoints do (Qwen3's tokenizer adds none).
"""
import base64
import io
import json
import os
import shutil
import sys

from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
import image_ref as R  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SPEC = os.path.join(ROOT, "internal", "vision", "testdata", "standin", "families.json")

# vLLM 0.32's get_placeholder_str(modality="image") of the model class
# serving each family, and the token the family's transformers processor
# replaces with an image's expansion.
QWEN_PH = "<|vision_start|><|image_pad|><|vision_end|>"
PLACEHOLDER = {
    "qwen2_5_vl": QWEN_PH, "qwen3_vl": QWEN_PH, "gemma3": "<start_of_image>", "llama4": "<|image|>",
    "internvl3": "<IMG_CONTEXT>", "llava_onevision": "<image>", "idefics3": "<image>", "smolvlm": "<image>",
}
REPLACED = {**PLACEHOLDER, "qwen2_5_vl": "<|image_pad|>", "qwen3_vl": "<|image_pad|>"}


def spec_of(config):
    for f in json.load(open(SPEC))["families"]:
        if f["config"] == config:
            return f
    raise LookupError(config + " not in " + SPEC)


def make_folder(config, qwen3_dir, out):
    os.makedirs(out, exist_ok=True)
    tok = json.load(open(os.path.join(qwen3_dir, "tokenizer.json"), encoding="utf-8"))
    next_id = max(t["id"] for t in tok["added_tokens"]) + 1
    for i, content in enumerate(spec_of(config)["add_tokens"]):
        tok["added_tokens"].append({"id": next_id + i, "content": content, "single_word": False, "lstrip": False,
                                    "rstrip": False, "normalized": False, "special": True})
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    # transformers builds its added tokens from tokenizer_config.json's
    # added_tokens_decoder: the tokens go there too, as in a real folder.
    cfg = json.load(open(os.path.join(qwen3_dir, "tokenizer_config.json"), encoding="utf-8"))
    new = tok["added_tokens"][len(tok["added_tokens"]) - len(spec_of(config)["add_tokens"]):]
    for t in new:
        cfg["added_tokens_decoder"][str(t["id"])] = {k: v for k, v in t.items() if k != "id"}
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, ensure_ascii=False)
    cdir = os.path.join(R.CONFIGS, config)
    for name in os.listdir(cdir):
        shutil.copy(os.path.join(cdir, name), out)


def expander(config):
    """A function from a Pillow image to the text its placeholder becomes."""
    call = {}
    if config in ("qwen2_5_vl", "qwen3_vl"):
        proc_cls = R.Qwen2_5_VLProcessor if config == "qwen2_5_vl" else R.Qwen3VLProcessor
        ip = R.Qwen2VLImageProcessorPil(**R.image_kwargs(config))
        proc = R.bare(proc_cls, image_processor=ip, image_token="<|image_pad|>")
    elif config == "gemma3":
        proc_cls = R.Gemma3Processor
        ip = R.Gemma3ImageProcessorPil(**R.image_kwargs(config))
        seq = "<image_soft_token>" * R.load(config, "processor_config.json")["image_seq_length"]
        proc = R.bare(proc_cls, full_image_sequence=f"\n\n<start_of_image>{seq}<end_of_image>\n\n")
    elif config == "internvl3":
        proc_cls = R.InternVLProcessor
        ip = R.GotOcr2ImageProcessorPil(**R.image_kwargs(config))
        proc = R.bare(proc_cls, start_image_token="<img>", end_image_token="</img>", image_token="<IMG_CONTEXT>",
                      image_seq_length=R.load(config, "processor_config.json")["image_seq_length"])
    elif config == "llava_onevision":
        proc_cls = R.LlavaOnevisionProcessor
        pc = R.load(config, "processor_config.json")
        ip = R.LlavaOnevisionImageProcessorPil(**R.image_kwargs(config))
        proc = R.bare(proc_cls, image_processor=ip, num_image_tokens=pc["num_image_tokens"],
                      vision_feature_select_strategy=pc["vision_feature_select_strategy"],
                      vision_aspect_ratio=pc["vision_aspect_ratio"], image_token="<image>")
    elif config in ("idefics3", "smolvlm"):
        proc_cls = R.Idefics3Processor if config == "idefics3" else R.SmolVLMProcessor
        ip_cls = R.Idefics3ImageProcessorPil if config == "idefics3" else R.SmolVLMImageProcessorPil
        ip = ip_cls(**R.image_kwargs(config))
        attrs = dict(fake_image_token="<fake_token_around_image>", image_token="<image>",
                     image_seq_len=R.load(config, "processor_config.json")["image_seq_len"])
        attrs["global_image_tag" if config == "idefics3" else "global_image_token"] = "<global-img>"
        proc = R.bare(proc_cls, **attrs)
        call = {"return_row_col_info": True}
    elif config == "llama4":
        import llama4_ref as L
        pre = R.load(config, "preprocessor_config.json")
        pc = R.load(config, "processor_config.json")
        ns = L.functions({"get_factors", "find_supported_resolutions", "get_best_fit"})
        size = L.SizeDict(height=pre["size"]["height"], width=pre["size"]["width"])
        proc = R.bare(L.Llama4Processor, patch_size=pc["patch_size"], downsample_ratio=int(round(1.0 / (0.5 ** 2))))
        possible = L.torch.tensor(ns["find_supported_resolutions"](max_num_chunks=pre["max_patches"], patch_size=size))

        def llama4(img):
            w, h = img.size
            target = ns["get_best_fit"]((h, w), possible, resize_to_max_canvas=pre["resize_to_max_canvas"])
            ratio_h, ratio_w = int(target[0]) // size.height, int(target[1]) // size.width
            per_chunk = int((size.height // proc.patch_size) * (size.width // proc.patch_size) // proc.downsample_ratio)
            return proc._prompt_split_image((ratio_h, ratio_w), per_chunk)
        return llama4
    else:
        raise LookupError("no whole-body reference for " + config)
    # The processor's own defaults for its image processor (Gemma 3's
    # pan-and-scan values, InternVL's crop_to_patches), as __call__ merges them.
    defaults = {k: v for k, v in (getattr(proc_cls, "images_kwargs", None) or {}).items() if k != "return_row_col_info"}

    def expand(img):
        out = ip([img.convert("RGB")], **{**defaults, **call})
        return proc.replace_image_token(out, 0)
    return expand


def load_image(url):
    head, data = url.split(",", 1)
    assert head.startswith("data:image/") and head.endswith(";base64"), head
    img = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
    img.load()
    return img


def shape(content, images, placeholder):
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
    missing = n - text.count(placeholder)
    assert missing >= 0
    return "\n".join([placeholder] * missing + [text])


def shape_openai(content, images):
    """vLLM's "openai"-format content of one message (a template that
    iterates over the parts, as Gemma 3's own): every part in its place,
    texts as {"type": "text"} items (empty ones kept: the dict is truthy),
    images as {"type": "image"}; a string is one text item."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = []
    for part in content:
        t = part["type"]
        if t in ("text", "input_text", "output_text"):
            out.append({"type": "text", "text": part["text"]})
        elif t == "image_url":
            images.append(part["image_url"]["url"])
            out.append({"type": "image"})
        elif t == "input_image":
            images.append(part["image_url"])
            out.append({"type": "image"})
        else:
            raise ValueError("unexpected part " + t)
    return out


def messages_of(endpoint, body, images, placeholder):
    if endpoint == "chat":
        msgs = body["messages"]
    else:
        msgs = []
        if "instructions" in body:
            msgs.append({"role": "system", "content": body["instructions"]})
        for item in body["input"]:
            assert item.get("type", "message") == "message"
            msgs.append({"role": item["role"], "content": item["content"]})
    if placeholder is None:
        return [{"role": m["role"], "content": shape_openai(m["content"], images)} for m in msgs]
    return [{"role": m["role"], "content": shape(m["content"], images, placeholder)} for m in msgs]


def count(config, model_dir, bodies, content_format="string"):
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(model_dir)
    # The image tokens are single special tokens, as in the family's own
    # tokenizer.
    for t in spec_of(config)["add_tokens"]:
        assert len(tok(t, add_special_tokens=False)["input_ids"]) == 1, t
    expand = expander(config)
    placeholder, replaced = PLACEHOLDER[config], REPLACED[config]
    if content_format == "openai":
        placeholder = None  # the template prints the image token itself
    expansions = {}
    for line in open(bodies, encoding="utf-8"):
        case = json.loads(line)
        images = []
        msgs = messages_of(case["endpoint"], case["body"], images, placeholder)
        text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        if images:
            pieces = text.split(replaced)
            assert len(pieces) == len(images) + 1, (case["case"], len(pieces) - 1, len(images))
            for u in images:
                if u not in expansions:  # a history's images recur in every later turn
                    expansions[u] = expand(load_image(u))
            text = pieces[0] + "".join(expansions[u] + pieces[i + 1] for i, u in enumerate(images))
        # The chat endpoint's build_tok_params passes the request's
        # add_special_tokens (default False); the Responses endpoint's leaves
        # TokenizeParams' default, True (vllm/renderers/params.py, 0.32): a
        # tokenizer that adds a BOS (Gemma's) adds it to a Responses prompt.
        ids = tok(text, add_special_tokens=case["endpoint"] == "responses")["input_ids"]
        print(json.dumps({"case": case["case"], "body_sha256": case["body_sha256"], "images": len(images),
                          "ref_tokens": len(ids)}))


def main():
    cmd = sys.argv[1]
    if cmd == "folder":
        make_folder(*sys.argv[2:5])
    elif cmd == "count":
        count(*sys.argv[2:6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
