#!/usr/bin/env python3
"""Reference for the prompt count vLLM reports on /v1/completions and /v1/responses, written
from docs/reference/server-preprocessing.md (§2, §3) and vLLM's responses/utils.py, independently
of islkit's Go code. It prepares each body and hands the text to count_ref.cjs (the Rust
tokenizers), which prints one count per line:

  python3 endpoint_ref.py MODEL_DIR < payloads.jsonl \\
    | NODE_PATH=.../node_modules node count_ref.cjs MODEL_DIR/tokenizer.json > counts.txt

Each input line is a request body, or a record holding one under "payload" (send's request
records, AIPerf's raw export). Output (of this script): one JSON line per input line, either
{"segments": [{"text": ..., "special": bool}, ...], "ids": N} -- the count is the sum of the
segments' encodings (with special tokens where "special") plus N token ids given as such -- or
{"error": ...} when the body cannot be reproduced here.

  completions: every text prompt is one segment encoded with add_special_tokens (the request
    field, default True: the tokenizer's post-processor adds its BOS); token-id prompts count
    their length; a list of prompts is the sum.
  responses: construct_input_messages (instructions -> system message when non-empty, a string
    input -> a user message, items -> messages: function_call -> assistant tool_calls merged into
    the assistant message before it, function_call_output -> tool message, reasoning -> assistant
    reasoning, an assistant message -> its first text part, anything else as given), then vLLM's
    chat parsing in the "string" content format (text parts joined with "\\n", null content "",
    unknown keys dropped, tool-call arguments json.loads-ed), then the chat template rendered as
    transformers does (render_ref.py) with add_generation_prompt=True, then ONE segment encoded
    WITH special tokens (ResponsesRequest leaves add_special_tokens at True: a template BOS is
    doubled on BOS-adding tokenizers).

Templates whose content format vLLM would detect as "openai" (a loop over a message's content)
and continued final messages are not reproduced (an error line).
"""
import json
import os
import sys

import jinja2.nodes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render_ref  # noqa: E402
import wire_ref  # noqa: E402

TEXT_PARTS = ("text", "input_text", "output_text", "refusal", "thinking")


class Unsupported(Exception):
    pass


def openai_format(src):
    """True when a for loop iterates over X.content / X['content'] of a loop variable X that runs
    over messages (or a name set from messages): vLLM's "openai" content-format detection, enough
    for the reference models' templates."""
    ast = render_ref.env().parse(src)
    sources = {"messages"}
    for a in ast.find_all(jinja2.nodes.Assign):
        if isinstance(a.target, jinja2.nodes.Name) and any(
                isinstance(n, jinja2.nodes.Name) and n.name in sources for n in a.node.find_all(jinja2.nodes.Name)):
            sources.add(a.target.name)
    loop_vars = set()
    for f in ast.find_all(jinja2.nodes.For):
        names = [n.name for n in f.iter.find_all(jinja2.nodes.Name)] if not isinstance(f.iter, jinja2.nodes.Name) else [f.iter.name]
        if any(n in sources for n in names) and isinstance(f.target, jinja2.nodes.Name):
            loop_vars.add(f.target.name)
    for f in ast.find_all(jinja2.nodes.For):
        it = f.iter
        while isinstance(it, (jinja2.nodes.Filter, jinja2.nodes.Test)):
            it = it.node
        if isinstance(it, jinja2.nodes.Getattr) and it.attr == "content" and isinstance(it.node, jinja2.nodes.Name) \
                and it.node.name in loop_vars:
            return True
        if isinstance(it, jinja2.nodes.Getitem) and isinstance(it.arg, jinja2.nodes.Const) and it.arg.value == "content" \
                and isinstance(it.node, jinja2.nodes.Name) and it.node.name in loop_vars:
            return True
    return False


def first_text(parts):
    if not parts:
        return None
    p = parts[0]
    return p.get("text", "") if isinstance(p, dict) else p


def item_message(item, msgs):
    """_construct_message_from_response_item: appends to msgs or updates its last message."""
    prev = msgs[-1] if msgs and msgs[-1].get("role") == "assistant" else None
    t = item.get("type")
    if t == "function_call":
        call = {"id": item.get("call_id"), "function": {"name": item.get("name"), "arguments": item.get("arguments")},
                "type": "function"}
        if prev is not None:
            if prev.get("tool_calls") is None:
                prev["tool_calls"] = [call]
                return
            prev["tool_calls"].append(call)
            return
        msgs.append({"role": "assistant", "tool_calls": [call]})
    elif t == "reasoning":
        if item.get("encrypted_content"):
            raise Unsupported("encrypted reasoning content")
        r = first_text(item.get("content"))
        if r is None:
            r = first_text(item.get("summary"))
        r = "" if r is None else r
        if prev is not None and prev.get("reasoning") is None:
            prev["reasoning"] = r
            return
        msgs.append({"role": "assistant", "reasoning": r})
    elif t == "function_call_output":
        msgs.append({"role": "tool", "content": item.get("output"), "tool_call_id": item.get("call_id")})
    elif item.get("role") == "assistant":
        c = item.get("content")
        if isinstance(c, str):
            text = c
        elif c:
            text = first_text(list(c))
        else:
            text = ""
        if prev is not None and prev.get("content") is None:
            prev["content"] = text
            return
        msgs.append({"role": "assistant", "content": text})
    else:
        msgs.append(item)


def chat_parse(m):
    """vLLM's _parse_chat_message_content in the "string" format for a text-only model."""
    role = m["role"]
    c = m.get("content")
    if c is None:
        content = ""
    elif isinstance(c, str):
        content = c
    else:
        texts = []
        for p in c:
            if isinstance(p, str):
                texts.append(p)
                continue
            t = p.get("type")
            if t not in TEXT_PARTS:
                raise Unsupported("content part " + str(t))
            v = p.get(t if t in ("refusal", "thinking") else "text")
            if v is not None:  # a None text is skipped (with a warning)
                texts.append(v)
        content = "\n".join(texts)
    out = {"role": role, "content": content}
    if role == "assistant" and m.get("tool_calls") is not None:
        calls = []
        for tc in m["tool_calls"]:
            tc = json.loads(json.dumps(tc))
            args = tc.get("function", {}).get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {}
            elif not isinstance(args, (dict, list)):
                args = {}
            tc["function"]["arguments"] = args
            calls.append(tc)
        if calls:
            out["tool_calls"] = calls
    if role == "tool" and "tool_call_id" in m:
        out["tool_call_id"] = m["tool_call_id"]
    if isinstance(m.get("name"), str):
        out["name"] = m["name"]
    if role == "assistant" and m.get("reasoning") is not None:
        out["reasoning"] = m["reasoning"]
        out["reasoning_content"] = m["reasoning"]
    return out


def responses_tools(tools):
    out = []
    for t in tools or []:
        if t.get("type") != "function":
            continue
        if "function" in t:
            fn = dict(t["function"])
        else:
            fn = {k: v for k, v in t.items() if k != "type"}
        dumped = {"name": fn.get("name"), "description": fn.get("description"), "parameters": fn.get("parameters")}
        dumped.update({k: v for k, v in fn.items() if k not in dumped})
        out.append({"type": "function", "function": dumped})
    return out or None


def responses(body, src, special):
    inp = body["input"]
    if not isinstance(inp, str) and inp:
        last = inp[-1]
        if last.get("type", "message") in ("message", "reasoning") and last.get("status") in ("in_progress", "incomplete"):
            raise Unsupported("a continued final message")
    msgs = []
    if body.get("instructions"):
        msgs.append({"role": "system", "content": body["instructions"]})
    if isinstance(inp, str):
        msgs.append({"role": "user", "content": inp})
    else:
        for item in inp:
            item_message(json.loads(json.dumps(item)), msgs)
    ctx = dict(special)
    ctx.update(messages=[chat_parse(m) for m in msgs], tools=responses_tools(body.get("tools")), documents=None,
               add_generation_prompt=True)
    effort = (body.get("reasoning") or {}).get("effort")
    if isinstance(effort, str) and effort != "auto":
        ctx["reasoning_effort"] = effort
        ctx["enable_thinking"] = effort != "none"
    r = render_ref.render_safe(src, ctx)
    if not r["ok"]:
        raise Unsupported("template error: " + r["err"])
    return {"segments": [{"text": r["out"], "special": True}], "ids": 0}


def completions(body):
    p = body["prompt"]
    special = body.get("add_special_tokens", True)
    prompts = [p] if isinstance(p, str) else p
    if prompts and all(isinstance(x, int) for x in prompts):
        return {"segments": [], "ids": len(prompts)}
    segs, ids = [], 0
    for x in prompts:
        if isinstance(x, str):
            segs.append({"text": x, "special": special})
        elif isinstance(x, list) and all(isinstance(i, int) for i in x):
            ids += len(x)
        else:
            raise Unsupported("prompt element " + repr(x)[:40])
    return {"segments": segs, "ids": ids}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src, special = wire_ref.load_model(argv[1])
    render_ref.set_now(os.environ.get("REF_NOW"))
    is_openai = src is not None and openai_format(src)
    for line in sys.stdin:
        if not line.strip():
            continue
        rec = json.loads(line)
        body = rec.get("payload", rec) if isinstance(rec.get("payload"), dict) else rec
        try:
            if "messages" in body:
                raise Unsupported("a chat body (see wire_ref.py)")
            if "prompt" in body:
                out = completions(body)
            elif "input" in body:
                if src is None:
                    raise Unsupported("the model has no chat template")
                if is_openai:
                    raise Unsupported('the template\'s content format is "openai"')
                out = responses(body, src, special)
            else:
                raise Unsupported("neither a completions nor a Responses body")
        except Unsupported as e:
            out = {"error": str(e)}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
