#!/usr/bin/python3
"""Python Jinja2 renders for the jinja fork's ported upstream tests.

Usage: /usr/bin/python3 scripts/jinja-reference.py DIR   (make jinja-reference)

DIR is internal/chat/internal/jinja/testdata. Writes, gzip-compressed and
byte-reproducible:
  DIR/reference/requests.json.gz      {"<template>/<request>": text or "RENDER ERROR: ..."}
                                      for every templates/*.jinja x requests/*.json
  DIR/reference/provisioning.json.gz  [{"output": text} | {"error": message}]
                                      for each case of provisioning/cases.json

Adapted from github.com/ardanlabs/jinja v1.12.0 scripts/render_python.py and
render_provisioning.py (Apache License 2.0, Copyright Ardan Labs), which the
upstream tests ran through `uv` at every `go test`. Changes: the references are
rendered once and kept in testdata, so tests need no Python; strftime_now is
pinned (STRFTIME_NOW, also in the Go tests) so the references do not change
with the date; no from_json filter (transformers registers none, and the fork
removed it).

Needs Python 3 with Jinja2 (Debian: apt-get install -y python3-jinja2).
"""

from __future__ import annotations

import gzip
import json
import sys
from datetime import datetime
from pathlib import Path

import jinja2
import jinja2.ext  # noqa: F401  (registers loopcontrols extension)
import jinja2.nodes
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

# The clock strftime_now reads; the Go tests pin the same instant.
STRFTIME_NOW = datetime(2025, 7, 10, 12, 0, 0)


class GenerationExtension(jinja2.ext.Extension):
    """No-op {% generation %}...{% endgeneration %}, as transformers' AssistantTracker
    renders it for prompts."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.Scope(body).set_lineno(lineno)


def _raise_exception(message):
    raise TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys, default=str)


def _strftime_now(format):
    return STRFTIME_NOW.strftime(format)


def make_env() -> ImmutableSandboxedEnvironment:
    # transformers' apply_chat_template environment.
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[jinja2.ext.loopcontrols, GenerationExtension],
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def build_context(req: dict) -> dict:
    # Must match buildRenderData in requests_test.go.
    return {
        "messages": req.get("messages"),
        "tools": req.get("tools"),
        "add_generation_prompt": True,
        "bos_token": "<s>",
        "eos_token": "</s>",
        "enable_thinking": False,
        "thinking": False,
        "reasoning_effort": "medium",
        "model_identity": "You are a helpful assistant.",
        "builtin_tools": [],
        "date": "2024-01-01",
        "date_string": "2024-01-01",
        "tools_in_user_message": False,
    }


def normalize_tool_call_arguments(req: dict) -> None:
    """OpenAI argument strings to maps, as the upstream's caller (Kronk) does."""
    for message in req.get("messages", []):
        if message.get("role") != "assistant":
            continue
        for tool_call in message.get("tool_calls", []):
            function = tool_call.get("function", {})
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                    if isinstance(arguments, str):
                        arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    continue
                if isinstance(arguments, dict) or arguments is None:
                    function["arguments"] = arguments


def render_requests(env, root: Path) -> dict:
    templates = sorted((root / "templates").glob("*.jinja"))
    requests = sorted((root / "requests").glob("*.json"))
    if not templates or not requests:
        sys.exit(f"no templates or requests under {root}")
    parsed = {p.stem: json.loads(p.read_text()) for p in requests}
    for req in parsed.values():
        normalize_tool_call_arguments(req)
    out = {}
    for tpl_path in templates:
        name = tpl_path.stem
        src = tpl_path.read_text()
        for req_name, req in parsed.items():
            ctx = build_context(req)
            ctx.update(req.get("chat_template_kwargs", {}).get(name, {}))
            try:
                out[f"{name}/{req_name}"] = env.from_string(src).render(**ctx)
            except Exception as e:  # whatever the template raises
                out[f"{name}/{req_name}"] = f"RENDER ERROR: {e}\n"
    return out


def render_provisioning(env, root: Path) -> list:
    results = []
    for case in json.loads((root / "provisioning" / "cases.json").read_text()):
        source = case.get("source", "")
        if "source_file" in case:
            source = (root / "provisioning" / case["source_file"]).read_text()
        try:
            results.append({"output": env.from_string(source).render(**case["data"])})
        except Exception as exc:
            results.append({"error": str(exc)})
    return results


def write(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(value, ensure_ascii=False, indent=0, sort_keys=True).encode()
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as z:
        z.write(data)


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = Path(sys.argv[1])
    env = make_env()
    write(root / "reference" / "requests.json.gz", render_requests(env, root))
    write(root / "reference" / "provisioning.json.gz", render_provisioning(env, root))
    print(f"jinja2 {jinja2.__version__}: wrote {root / 'reference'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
