#!/usr/bin/env python3
"""Reference image expansions for internal/vision (TestReference).

For every family's processor configuration in internal/vision/testdata/configs
and a grid of image sizes, runs the real preprocessing on a blank image of that
size and writes what one image placeholder becomes in the prompt:

- transformers' PIL (slow) image processors, then the model processor's own
  replace_image_token (the method ProcessorMixin.__call__ uses to expand each
  placeholder), called on a processor object carrying the attributes its
  __init__ would set from the tokenizer (no tokenizer or weights needed);
- mistral-common's ImageEncoder for Mistral-format (tekken.json) models.

Each line: {"config", "width", "height", "kwargs", "placeholder", "expansion":
[[piece, repeat], ...]} or "error" (the exception's type) where the processor
refuses the image. Pieces are the expansion split at the family's special
tokens, runs of one piece collapsed.

Usage: scripts/vision/make-reference.sh (venv from requirements.txt).
"""
import json
import os
import re
import sys

import numpy as np
from PIL import Image

from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil
from transformers.models.gemma3.processing_gemma3 import Gemma3Processor
from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil
from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil
from transformers.models.idefics3.processing_idefics3 import Idefics3Processor
from transformers.models.internvl.processing_internvl import InternVLProcessor
from transformers.models.llava_onevision.image_processing_pil_llava_onevision import LlavaOnevisionImageProcessorPil
from transformers.models.llava_onevision.processing_llava_onevision import LlavaOnevisionProcessor
from transformers.models.pixtral.image_processing_pil_pixtral import PixtralImageProcessorPil
import transformers.models.pixtral as _pixtral_pkg
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
from transformers.models.qwen2_5_vl.processing_qwen2_5_vl import Qwen2_5_VLProcessor
from transformers.models.qwen3_vl.processing_qwen3_vl import Qwen3VLProcessor
from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil
from transformers.models.smolvlm.processing_smolvlm import SmolVLMProcessor

from mistral_common.protocol.instruct.chunk import ImageChunk
from mistral_common.tokens.tokenizers.image import ImageConfig, ImageEncoder, SpecialImageIDs

CONFIGS = os.path.join(os.path.dirname(__file__), "..", "..", "internal", "vision", "testdata", "configs")

# (width, height): tiny, exact multiples of the patch grids, odd, extreme
# aspect ratios (Qwen's limit is 200), huge.
SIZES = [
    (1, 1), (2, 2), (3, 600), (10, 10), (13, 29), (27, 27), (28, 28), (29, 29), (32, 32), (56, 56),
    (200, 1), (201, 1), (224, 224), (336, 336), (364, 364), (384, 384), (448, 448), (512, 512),
    (640, 480), (479, 641), (700, 1), (672, 336), (768, 384), (800, 600), (896, 896), (1024, 1024),
    (1001, 999), (1092, 728), (1280, 720), (720, 1280), (1540, 1540), (1541, 1), (1920, 1080),
    (333, 517), (97, 1203), (2000, 10), (10, 2000), (4000, 20), (5601, 28), (2048, 2048),
    (3000, 4000), (4096, 2160), (6000, 1000), (5000, 5000),
    # Where rounding rules part: LLaVA-OneVision's round(x, 7) against
    # truncation, mistral-common's half-to-even against half-up.
    (214, 428), (326, 652), (369, 820), (2048, 1025), (3080, 1121),
]


def load(name, file):
    path = os.path.join(CONFIGS, name, file)
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def image_kwargs(name):
    cfg = load(name, "preprocessor_config.json")
    drop = {"image_processor_type", "processor_class", "video_sampling"}
    return {k: v for k, v in cfg.items() if k not in drop and v is not None}


def method_from_source(module_dir, file, cls_name, method):
    """A class with one method taken from a module that cannot be imported
    here (processing_pixtral imports torch for another function)."""
    import ast
    path = os.path.join(module_dir, file)
    tree = ast.parse(open(path).read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == method:
                    fn.decorator_list = []
                    ns = {}
                    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), ns)
                    return type(cls_name, (), {method: ns[method]})
    raise LookupError(f"{cls_name}.{method} not in {path}")


PixtralProcessor = method_from_source(os.path.dirname(_pixtral_pkg.__file__), "processing_pixtral.py",
                                      "PixtralProcessor", "replace_image_token")


def bare(cls, **attrs):
    """A processor object with the attributes its __init__ sets, no tokenizer."""
    p = object.__new__(cls)
    p.__dict__.update(attrs)
    return p


def split_pieces(text, specials):
    pat = "(" + "|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True)) + ")"
    pieces = [p for p in re.split(pat, text) if p]
    out = []
    for p in pieces:
        if out and out[-1][0] == p:
            out[-1][1] += 1
        else:
            out.append([p, 1])
    return out


def hf_family(name, ip_cls, make_proc, placeholder, specials, call_kwargs=None, variants=None, proc_cls=None):
    ip = ip_cls(**image_kwargs(name))
    # The processor's own defaults for its image processor (Gemma 3's
    # pan-and-scan values, InternVL's crop_to_patches), as __call__ merges them.
    defaults = {k: v for k, v in (getattr(proc_cls, "images_kwargs", None) or {}).items() if k != "return_row_col_info"}
    call_kwargs = {**defaults, **(call_kwargs or {})}
    for kw in variants or [{}]:
        for w, h in SIZES:
            cell = {"config": name, "width": w, "height": h, "kwargs": kw, "placeholder": placeholder}
            try:
                img = Image.new("RGB", (w, h))
                out = ip([img], **{**call_kwargs, **kw})
                proc = make_proc(ip, kw)
                text = proc.replace_image_token(out, 0)
                cell["expansion"] = split_pieces(text, specials)
            except Exception as e:  # the processor refuses the image
                cell["error"] = type(e).__name__
                cell["message"] = str(e)[:200]
            yield cell


def qwen(name, proc_cls):
    return hf_family(
        name, Qwen2VLImageProcessorPil,
        lambda ip, kw: bare(proc_cls, image_processor=ip, image_token="<|image_pad|>"),
        "<|image_pad|>", ["<|image_pad|>"], proc_cls=proc_cls,
        variants=[{}, {"min_pixels": 256 * 28 * 28, "max_pixels": 1280 * 28 * 28}, {"min_pixels": 1600 * 28 * 28},
                  {"max_pixels": 200000}] if name == "qwen2_5_vl" else
        [{}, {"size": {"shortest_edge": 128 * 32 * 32, "longest_edge": 1024 * 32 * 32}}],
    )


def gemma3(name):
    pre = load(name, "processor_config.json")
    seq = "<image_soft_token>" * pre["image_seq_length"]
    full = f"\n\n<start_of_image>{seq}<end_of_image>\n\n"
    return hf_family(
        name, Gemma3ImageProcessorPil,
        lambda ip, kw: bare(Gemma3Processor, full_image_sequence=full),
        "<start_of_image>", ["<start_of_image>", "<image_soft_token>", "<end_of_image>"], proc_cls=Gemma3Processor,
        variants=[{"do_pan_and_scan": False}, {"do_pan_and_scan": True},
                  {"do_pan_and_scan": True, "pan_and_scan_max_num_crops": 2, "pan_and_scan_min_crop_size": 128,
                   "pan_and_scan_min_ratio_to_activate": 1.5}],
    )


def pixtral(name):
    pc = load(name, "processor_config.json")
    merge = pc.get("spatial_merge_size", 1)
    return hf_family(
        name, PixtralImageProcessorPil,
        lambda ip, kw: bare(PixtralProcessor, patch_size=pc["patch_size"], spatial_merge_size=merge,
                            image_token="[IMG]", image_break_token="[IMG_BREAK]", image_end_token="[IMG_END]"),
        "[IMG]", ["[IMG]", "[IMG_BREAK]", "[IMG_END]"],
        # PixtralProcessor._process_images hands its image processor the
        # merged patch (patch_size × spatial_merge_size), not the
        # preprocessor's own patch_size: Mistral Small 3.1's images are
        # padded to 28 pixels, not 14.
        call_kwargs={"patch_size": pc["patch_size"] * merge},
    )


def internvl(name):
    pc = load(name, "processor_config.json")
    return hf_family(
        name, GotOcr2ImageProcessorPil,
        lambda ip, kw: bare(InternVLProcessor, start_image_token="<img>", end_image_token="</img>",
                            image_token="<IMG_CONTEXT>", image_seq_length=pc["image_seq_length"]),
        "<IMG_CONTEXT>", ["<img>", "</img>", "<IMG_CONTEXT>"], proc_cls=InternVLProcessor,
        variants=[{}, {"max_patches": 6}],
    )


def llava_onevision(name):
    pc = load(name, "processor_config.json")
    return hf_family(
        name, LlavaOnevisionImageProcessorPil,
        lambda ip, kw: bare(LlavaOnevisionProcessor, image_processor=ip, num_image_tokens=pc["num_image_tokens"],
                            vision_feature_select_strategy=pc["vision_feature_select_strategy"],
                            vision_aspect_ratio=pc["vision_aspect_ratio"], image_token="<image>"),
        "<image>", ["<image>"], proc_cls=LlavaOnevisionProcessor,
    )


def idefics(name, proc_cls, ip_cls):
    pc = load(name, "processor_config.json")
    attrs = dict(fake_image_token="<fake_token_around_image>", image_token="<image>", image_seq_len=pc["image_seq_len"])
    if proc_cls is Idefics3Processor:
        attrs["global_image_tag"] = "<global-img>"
    else:
        attrs["global_image_token"] = "<global-img>"
    specials = ["<fake_token_around_image>", "<image>", "<global-img>"] + [
        f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)]
    return hf_family(
        name, ip_cls, lambda ip, kw: bare(proc_cls, **attrs), "<image>", specials,
        call_kwargs={"return_row_col_info": True}, proc_cls=proc_cls, variants=[{}, {"do_image_splitting": False}],
    )


def mistral(name):
    cfg = load(name, "tekken.json")["image"]
    enc = ImageEncoder(ImageConfig(**cfg), SpecialImageIDs(img=10, img_break=12, img_end=13))
    names = {10: "[IMG]", 12: "[IMG_BREAK]", 13: "[IMG_END]"}
    for w, h in SIZES:
        cell = {"config": name, "width": w, "height": h, "kwargs": {}, "placeholder": "[IMG]"}
        try:
            toks = enc._image_to_num_tokens(Image.new("RGB", (w, h)))
            # __call__ resizes the pixels too; the tokens are built from this
            # pair exactly as __call__ does, checked on the small images.
            wt, ht = toks
            ids = ([10] * wt + [12]) * ht
            ids[-1] = 13
            if w * h <= 1540 * 1540:
                assert enc(ImageChunk(image=Image.new("RGB", (w, h)))).tokens == ids
            cell["expansion"] = split_pieces("".join(names[i] for i in ids), list(names.values()))
        except Exception as e:
            cell["error"] = type(e).__name__
            cell["message"] = str(e)[:200]
        yield cell


def main():
    gens = {
        "qwen2_5_vl": lambda: qwen("qwen2_5_vl", Qwen2_5_VLProcessor),
        "qwen3_vl": lambda: qwen("qwen3_vl", Qwen3VLProcessor),
        "gemma3": lambda: gemma3("gemma3"),
        "pixtral": lambda: pixtral("pixtral"),
        "mistral3": lambda: pixtral("mistral3"),
        "internvl3": lambda: internvl("internvl3"),
        "llava_onevision": lambda: llava_onevision("llava_onevision"),
        "idefics3": lambda: idefics("idefics3", Idefics3Processor, Idefics3ImageProcessorPil),
        "smolvlm": lambda: idefics("smolvlm", SmolVLMProcessor, SmolVLMImageProcessorPil),
        "mistral_small_3_1_tekken": lambda: mistral("mistral_small_3_1_tekken"),
        "pixtral_12b_tekken": lambda: mistral("pixtral_12b_tekken"),
    }
    only = sys.argv[1:] or list(gens)
    for name in only:
        for cell in gens[name]():
            print(json.dumps(cell, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
