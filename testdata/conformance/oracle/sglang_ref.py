#!/usr/bin/env python3
"""Reference for the prompt count SGLang reports on /v1/chat/completions, written from
docs/reference/server-preprocessing.md §5 (SGLang main: serving_chat.py @002897c2,
jinja_template_utils.py @1dc194d5, protocol.py @004c82e0) independently of islkit's Go code.
It renders each chat body as SGLang does and counts it with the Python HuggingFace `tokenizers`
(Rust 0.22), printing one line per input line: the count, or "error: ..." where SGLang would
refuse the request (or this script cannot reproduce it).

  python3 sglang_ref.py MODEL_DIR < payloads.jsonl > counts.txt

Each input line is a chat body, or a record holding one under "payload" (send's request
records). The pins are in requirements.txt beside this script.

SGLang's rules, in the order they apply:
  - messages are validated and model_dump-ed: a user message keeps role and content
    (ChatCompletionMessageUserParam); the others role, content, tool_call_id, name,
    reasoning_content, tool_calls (`reasoning` is not a field); keys whose value is None are
    dropped; roles other than "user" are lower-cased;
  - content null -> "";
  - the content format: "openai" when the template loops over message/msg/m['content'] (the
    literal names only, no aliases), else "string". String format: a list's text parts are
    joined with " " (media dropped). Openai format: the parts are kept (media become
    {"type": "image"} ...), but a tool message of text parts only is joined with " ";
  - assistant tool-call arguments: a string is parsed as JSON (orjson.loads); invalid JSON or a
    non-object is refused ("must be valid JSON"); each call is dumped as ToolCall: id, index,
    type (default "function"), function{name, arguments};
  - a media part (image_url, video_url, audio_url) is refused: the reference models are
    text-only (_validate_media_content, SGLang 0.5.23);
  - a reasoning effort (reasoning_effort, or a "reasoning" object's effort; the object's
    enabled turns thinking on) sets the default of chat_template_kwargs' thinking and
    enable_thinking: false for "none", true for any other (protocol.py's
    normalize_reasoning_inputs, SGLang 0.5.23); the effort is passed as reasoning_effort;
  - tools: passed only when the request has tools and tool_choice is not "none" (a named
    tool_choice keeps that tool); each dumped as Tool: type, function, defer_loading, the
    function as SGLang 0.5.23's Function serializer writes it (description, name, parameters,
    strict, defer_loading in the client's key order, the fields it left out after, strict and
    defer_loading dropped when None, a tool's defer_loading copied onto a function without
    one); on a template exception the render is retried with the bare function objects;
  - a final assistant message with string content (continue_final_message false) becomes a
    user message;
  - apply_chat_template(tokenize=False, add_generation_prompt=True, tools=..., **kwargs) as
    transformers renders it (render_ref.py); chat_template_kwargs passed as given;
  - the prompt is encoded with add_special_tokens=False when encode("") is not empty, else
    with the defaults (no extra BOS either way).
"""
import json
import os
import sys

import jinja2.nodes
from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render_ref  # noqa: E402
import sglang_request  # noqa: E402
import wire_ref  # noqa: E402

ROLES = ("system", "assistant", "tool", "function", "developer", "latest_reminder")


class Refused(Exception):
    pass


def openai_format(src):
    """SGLang's detection: some for loop iterates over message['content'], msg['content'] or
    m['content'] (or .content), through filters and tests, with those literal names."""
    ast = render_ref.env().parse(src)
    for f in ast.find_all(jinja2.nodes.For):
        it = f.iter
        while isinstance(it, (jinja2.nodes.Filter, jinja2.nodes.Test)):
            it = it.node
        if isinstance(it, jinja2.nodes.Getitem) and isinstance(it.arg, jinja2.nodes.Const) \
                and it.arg.value == "content" and isinstance(it.node, jinja2.nodes.Name) \
                and it.node.name in ("message", "msg", "m"):
            return True
        if isinstance(it, jinja2.nodes.Getattr) and it.attr == "content" \
                and isinstance(it.node, jinja2.nodes.Name) and it.node.name in ("message", "msg", "m"):
            return True
    return False


def content_of(role, c, openai):
    if c is None:
        return ""
    if isinstance(c, str):
        return c
    texts, items, all_text = [], [], True
    for j, p in enumerate(c):
        if not isinstance(p, dict):
            raise Refused(f"content[{j}] is not an object")
        t = p.get("type")
        if t == "text":
            if not isinstance(p.get("text"), str):
                raise Refused(f"content[{j}].text is not a string")
            texts.append(p["text"])
            items.append(p)
        elif t in ("image_url", "video_url", "audio_url"):
            raise Refused(f"content[{j}]: Model only supports text input; received unsupported content type '{t}'")
        else:
            raise Refused(f"content[{j}]: unsupported part type {t!r}")
    if not openai or (role == "tool" and all_text):
        return " ".join(texts)
    return items


def tool_calls_of(calls):
    out = []
    for j, tc in enumerate(calls):
        fn = tc.get("function") or {}
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                raise Refused(f"tool_calls[{j}]: arguments must be valid JSON")
            if not isinstance(args, dict):
                raise Refused(f"tool_calls[{j}]: arguments must be a JSON object")
        out.append({"id": tc.get("id"), "index": tc.get("index"), "type": tc.get("type") or "function",
                    "function": {"name": fn.get("name"), "arguments": args}})
    return out


def message_of(m, openai):
    role = m["role"]
    if role != "user":
        role = role.lower()
        if role not in ROLES:
            raise Refused(f"unknown role {m['role']!r}")
    out = {"role": role, "content": content_of(role, m.get("content"), openai)}
    if role != "user":
        out["tool_call_id"] = m.get("tool_call_id")
        out["name"] = m.get("name")
        out["reasoning_content"] = m.get("reasoning_content")
        calls = m.get("tool_calls")
        out["tool_calls"] = tool_calls_of(calls) if calls is not None and role == "assistant" else calls
    return {k: v for k, v in out.items() if v is not None}


def tools_of(body):
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if not tools or choice == "none":
        return None, None
    named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    out, flat = [], []
    for t in tools:
        f = t["function"]
        if named is not None and f.get("name") != named:
            continue
        dumped = sglang_request.tool_dump(t)
        out.append(dumped)
        fn = dumped["function"]
        flat.append(fn)
    return out, flat


def render(body, src, special, openai):
    msgs = [message_of(m, openai) for m in body["messages"]]
    if msgs and msgs[-1]["role"] == "assistant" and isinstance(msgs[-1].get("content"), str):
        if body.get("continue_final_message"):
            raise Refused("continue_final_message is not reproduced")
        msgs[-1] = {"role": "user", "content": msgs[-1]["content"]}
    tools, flat = tools_of(body)
    ctx = dict(special)
    try:
        ctx.update(sglang_request.reasoning_kwargs(body))
    except sglang_request.InvalidEffort as e:
        raise Refused(str(e))
    ctx.update(body.get("chat_template_kwargs") or {})
    ctx.update(messages=msgs, tools=tools, documents=None, add_generation_prompt=True)
    r = render_ref.render_safe(src, ctx)
    if not r["ok"] and flat is not None:
        ctx["tools"] = flat
        r = render_ref.render_safe(src, ctx)
    if not r["ok"]:
        raise Refused("template error: " + r["err"])
    return r["out"]


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src, special = wire_ref.load_model(argv[1])
    render_ref.set_now(os.environ.get("REF_NOW"))
    tok = Tokenizer.from_file(os.path.join(argv[1], "tokenizer.json"))
    plain = len(tok.encode("", add_special_tokens=True).ids) == 0
    openai = src is not None and openai_format(src)
    for line in sys.stdin:
        if not line.strip():
            continue
        rec = json.loads(line)
        body = rec["payload"] if isinstance(rec.get("payload"), dict) else rec
        try:
            if "messages" not in body:
                raise Refused("not a chat body")
            if src is None:
                raise Refused("the model has no chat template")
            text = render(body, src, special, openai)
            n = len(tok.encode(text, add_special_tokens=plain).ids)
            print(n)
        except Refused as e:
            print("error: " + str(e).replace("\n", " "))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
