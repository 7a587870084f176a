#!/usr/bin/env python3
"""Llama 4 cells of internal/vision's reference (appended by make-reference.sh).

transformers' Llama4ImageProcessor exists only on torch and torchvision; their
wheels on this machine's package index are the CUDA builds (gigabytes). So
this script takes the canvas functions of image_processing_llama4.py
(get_factors, find_supported_resolutions, get_best_fit) from their source and
runs them over a numpy stand-in for the few torch calls they make, with
torch's dtype rule for int64 / int (float32); the glue from the canvas to the
tile counts is the two lines of Llama4ImageProcessor._preprocess, and the
text is Llama4Processor._prompt_split_image itself.
"""
import ast
import json
import os
import sys
import types
from collections import defaultdict
from functools import lru_cache
import math

import numpy as np

import transformers.models.llama4 as llama4_pkg
from transformers.image_utils import SizeDict
from transformers.models.llama4.processing_llama4 import Llama4Processor

sys.path.insert(0, os.path.dirname(__file__))
from image_ref import SIZES, bare, load, split_pieces  # noqa: E402


class Tensor(np.ndarray):
    """int64 / int is float32, as in torch (the default dtype)."""

    def __truediv__(self, other):
        return np.asarray(self, dtype=np.float32).view(Tensor) / np.float32(other) \
            if self.dtype.kind == "i" else np.ndarray.__truediv__(self, other)


torch = types.SimpleNamespace(
    Tensor=Tensor,
    tensor=lambda data, device=None: np.asarray(data, dtype=np.int64).view(Tensor),
    where=lambda c, a, b: np.where(c, a, b).view(Tensor),
    max=lambda t: np.max(t),
    min=lambda t: np.min(t),
    argmin=lambda t: int(np.argmin(t)),  # first minimum, as torch on CPU
)


def functions(names):
    path = os.path.join(os.path.dirname(llama4_pkg.__file__), "image_processing_llama4.py")
    tree = ast.parse(open(path).read())
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    ns = {"torch": torch, "math": math, "defaultdict": defaultdict, "lru_cache": lru_cache, "SizeDict": SizeDict}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)
    return ns


def main():
    name = "llama4"
    pre = load(name, "preprocessor_config.json")
    pc = load(name, "processor_config.json")
    ns = functions({"get_factors", "find_supported_resolutions", "get_best_fit"})
    size = SizeDict(height=pre["size"]["height"], width=pre["size"]["width"])
    proc = bare(Llama4Processor, patch_size=pc["patch_size"], downsample_ratio=int(round(1.0 / (0.5 ** 2))))
    specials = ["<|image_start|>", "<|image_end|>", "<|image|>", "<|patch|>", "<|tile_x_separator|>", "<|tile_y_separator|>"]
    for kw in [{}, {"max_patches": 4}, {"resize_to_max_canvas": True}]:
        max_patches = kw.get("max_patches", pre["max_patches"])
        to_max = kw.get("resize_to_max_canvas", pre["resize_to_max_canvas"])
        possible = torch.tensor(ns["find_supported_resolutions"](max_num_chunks=max_patches, patch_size=size))
        for w, h in SIZES:
            target = ns["get_best_fit"]((h, w), possible, resize_to_max_canvas=to_max)
            ratio_h, ratio_w = int(target[0]) // size.height, int(target[1]) // size.width
            per_chunk = int((size.height // proc.patch_size) * (size.width // proc.patch_size) // proc.downsample_ratio)
            text = proc._prompt_split_image((ratio_h, ratio_w), per_chunk)
            print(json.dumps({"config": name, "width": w, "height": h, "kwargs": kw, "placeholder": "<|image|>",
                              "expansion": split_pieces(text, specials)}, sort_keys=True))


if __name__ == "__main__":
    main()
