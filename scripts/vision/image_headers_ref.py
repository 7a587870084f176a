#!/usr/bin/env python3
"""Header fixtures for internal/vision/imagehdr (TestPillowFixtures).

Writes small images in every container and variant the readers handle with
Pillow, and sizes.json: the size Pillow's Image.open reports for each (what
vLLM and SGLang hand the processor) and the EXIF orientation tag.
Usage: venv/bin/python scripts/vision/image_headers_ref.py OUTDIR
"""
import io
import json
import os
import sys

from PIL import Image

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def img(w, h, mode="RGB"):
    im = Image.new(mode, (w, h))
    # Some content, so encoders do not special-case a flat image.
    for x in range(0, w, 3):
        im.putpixel((x, (x * 7) % h), (255,) * len(mode) if mode != "P" else 1)
    return im


cases = {
    "rgb.png": lambda p: img(37, 19).save(p),
    "palette.png": lambda p: img(5, 300).convert("P").save(p),
    "rgba16.png": lambda p: img(64, 1, "RGBA").save(p),
    "baseline.jpg": lambda p: img(640, 480).save(p, quality=50),
    "progressive.jpg": lambda p: img(33, 77).save(p, progressive=True),
    "gray.jpg": lambda p: img(1, 1).convert("L").save(p),
    "big.jpg": lambda p: img(4001, 3).save(p),
    "lossy.webp": lambda p: img(123, 45).save(p, lossless=False),
    "lossless.webp": lambda p: img(77, 31).save(p, lossless=True),
    "alpha.webp": lambda p: img(50, 60, "RGBA").save(p, lossless=False),
    "animated.webp": lambda p: img(20, 10).save(p, save_all=True, append_images=[img(20, 10)], duration=100),
    "still.gif": lambda p: img(17, 9).convert("P").save(p),
    "animated.gif": lambda p: img(300, 2).convert("P").save(p, save_all=True, append_images=[img(300, 2).convert("P")]),
}


def exif_jpeg(p, orientation):
    im = img(40, 20)
    ex = Image.Exif()
    ex[0x0112] = orientation
    im.save(p, exif=ex.tobytes())


for o in (1, 3, 6, 8):
    cases[f"exif{o}.jpg"] = (lambda o: lambda p: exif_jpeg(p, o))(o)

sizes = {}
for name, make in sorted(cases.items()):
    path = os.path.join(out, name)
    make(path)
    with Image.open(path) as im:
        sizes[name] = {"format": im.format.lower(), "width": im.size[0], "height": im.size[1],
                       "orientation": im.getexif().get(0x0112, 0)}
with open(os.path.join(out, "sizes.json"), "w") as f:
    json.dump(sizes, f, indent=1, sort_keys=True)
