#!/usr/bin/env python3
"""Reference prompts of DeepSeek-V3.2 chat requests as vLLM renders them.

Writes internal/serverprofile/testdata/deepseek-v32-expect.jsonl.gz: a first
line recording the sources and versions, then one line per chat body of the
corpus below with the prompt text, its token ids and their count, or the
error the encoder raises on it.

The rendering is DeepSeek's own encoder, encoding/encoding_dsv32.py of
deepseek-ai/DeepSeek-V3.2, run as it is: vLLM copies it unchanged as
vllm/tokenizers/deepseek_v32_encoding.py. Fetch that file (it is not part of
islkit and is not committed) and pass its path:
  https://raw.githubusercontent.com/vllm-project/vllm/026ddf88b0e2244af81052ca500c42aae5aeca2b/vllm/tokenizers/deepseek_v32_encoding.py
Its SHA-256 is recorded in the output. What vLLM does around it is
transcribed below: deepseek_v32.py's apply_chat_template (vLLM commit
10f319bf: thinking from the chat_template_kwargs "thinking" or
"enable_thinking", the tools in a system message put first, drop_thinking
when the last message is the user's) and the conversation chat_utils.py
makes of the request ("string" content format: text parts joined with
"\n", a null content ""; tools as ChatCompletionToolsParam.model_dump()).
Tool-call arguments are left as the request's JSON strings (see
deepseek_v32.go on vLLM's dict arguments).

The tokenizer is the deepseek_v3 conformance model's tokenizer.json with the
two place holders DeepSeek-V3.1 and V3.2 turned into <think> and </think>
(ids 128798 and 128799) renamed so, encoded with the Python tokenizers
package (add_special_tokens=False, as vLLM encodes the prompt).

Usage: deepseek-v32-ref.py ENCODER.py MODEL_DIR OUT.jsonl.gz   the corpus expectations
       deepseek-v32-ref.py --count ENCODER.py MODEL_DIR < RECORDS  one count per
           (MODEL_DIR the deepseek_v3 folder, as above)
           line of chat bodies or send records (their "payload"; records
           with neither, such as send's run header, are skipped)
       deepseek-v32-ref.py --model-dir MODEL_DIR OUT_DIR  writes the V3.2
           stand-in folder (tokenizer files renamed as below, config.json)
"""
import copy, gzip, hashlib, importlib.util, json, sys

import tokenizers

ENCODER_SOURCE = "https://github.com/vllm-project/vllm/blob/026ddf88b0e2244af81052ca500c42aae5aeca2b/vllm/tokenizers/deepseek_v32_encoding.py"
PLACEHOLDERS = {"<｜place▁holder▁no▁798｜>": "<think>", "<｜place▁holder▁no▁799｜>": "</think>"}

if sys.argv[1] == "--model-dir":
    import os, shutil
    model_dir, out_dir = sys.argv[2:4]
    os.makedirs(out_dir, exist_ok=True)
    text = open(f"{model_dir}/tokenizer.json", encoding="utf-8").read()
    for old, new in PLACEHOLDERS.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    open(f"{out_dir}/tokenizer.json", "w", encoding="utf-8").write(text)
    shutil.copy(f"{model_dir}/tokenizer_config.json", out_dir)
    open(f"{out_dir}/config.json", "w").write('{"model_type": "deepseek_v32"}\n')
    sys.exit(0)
COUNT = sys.argv[1] == "--count"
if COUNT:
    sys.argv.pop(1)
encoder_path, model_dir = sys.argv[1:3]
out_path = None if COUNT else sys.argv[3]
spec = importlib.util.spec_from_file_location("encoding_dsv32", encoder_path)
enc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(enc)

text = open(f"{model_dir}/tokenizer.json", encoding="utf-8").read()
for old, new in PLACEHOLDERS.items():
    assert text.count(old) == 1, old
    text = text.replace(old, new)
TOK = tokenizers.Tokenizer.from_str(text)

# ---- vLLM around the encoder (transcribed; see the docstring) ----

def conversation_message(m):
    """chat_utils.py _parse_chat_message_content, "string" format."""
    role = m["role"]
    c = m.get("content")
    if c is None:
        content = ""
    elif isinstance(c, str):
        content = c
    else:
        content = "\n".join(p["text"] for p in c)
    out = {"role": role, "content": content}
    if role == "assistant":
        if m.get("tool_calls") is not None:
            out["tool_calls"] = list(m["tool_calls"])
        reasoning = m.get("reasoning") or m.get("reasoning_content")
        if reasoning is not None:
            out["reasoning"] = reasoning
            out["reasoning_content"] = reasoning
    elif role == "tool" and "tool_call_id" in m:
        out["tool_call_id"] = m["tool_call_id"]
    if isinstance(m.get("name"), str):
        out["name"] = m["name"]
    return out


def tool_dump(t):
    """ChatCompletionToolsParam.model_dump(): name, description, parameters, extras."""
    f = t["function"]
    fn = {"name": f["name"], "description": f.get("description"), "parameters": f.get("parameters")}
    for k, v in f.items():
        if k not in fn:
            fn[k] = v
    return {"type": t.get("type", "function"), "function": fn}


def apply_chat_template(body):
    """deepseek_v32.py's _DeepseekV32Tokenizer.apply_chat_template."""
    kwargs = body.get("chat_template_kwargs") or {}
    thinking = kwargs.get("thinking", False) or kwargs.get("enable_thinking", False)
    thinking_mode = "thinking" if thinking else "chat"
    messages = [conversation_message(m) for m in body["messages"]]
    tools = [tool_dump(t) for t in body["tools"]] if body.get("tools") else None
    if tools is not None and len(tools) > 0:
        messages.insert(0, {"role": "system"})
        messages[0]["tools"] = tools
    drop_thinking = messages[-1]["role"] == "user"
    return enc.encode_messages(messages, thinking_mode=thinking_mode, drop_thinking=drop_thinking)

# ---- the corpus ----

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name, e.g. Zürich"},
                          "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer", "default": 1}},
                          "required": ["city"]}}}
SEARCH = {"type": "function", "function": {"name": "search_docs", "parameters": {"type": "object", "properties": {
          "query": {"type": "string"}, "filters": {"type": "object", "properties": {"lang": {"type": "array", "items": {"type": "string"}},
          "score": {"type": "number", "minimum": 0.5}}}}}, "strict": True}}
BARE = {"type": "function", "function": {"name": "ping"}}
UNI_TOOL = {"type": "function", "function": {"name": "翻訳", "description": "Übersetze den Text — 翻译 · ترجمة 🌍", "parameters": {"type": "object", "properties": {"文本": {"type": "string"}}}}}

UNICODE = ["héllo wörld — ça va? 🙂", "日本語のテキストと中文混合，还有한국어。", "مرحبا بالعالم ‏RTL‏ text", "e\u0301 combining + ZWJ 👩\u200d💻 family 👨\u200d👩\u200d👧",
           "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math 𝛼𝛽𝛾 and \u2028line sep", "tabs\tand\nnewlines\r\n and   spaces  ", ""]
SYSTEMS = [None, "You are a helpful assistant.", "", "Réponds en français. 你好！", [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]]
THINKING = [None, {"thinking": True}, {"enable_thinking": True}, {"thinking": False}, {"thinking": "yes"}, {"thinking": 0}, {"enable_thinking": [], "thinking": 1}]


def call(i, name, args):
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}}


ARGS = [{"city": "Paris"}, {"city": "東京", "unit": "celsius", "days": 3}, {"query": "ok", "filters": {"lang": ["en", "de"], "score": 0.75}},
        {"n": 1.0, "big": 1234567890123456789, "neg": -0.0, "exp": 1e-7, "t": True, "f": False, "z": None},
        '{"a": 1, "a": "dup", "b": "x"}', {}, {"text": "line1\nline2 \"quoted\" </think> <｜User｜>"}, {"list": [1, "two", {"three": 3}]}]


def convs():
    """(name, messages) shapes: single turns, multi-turn with reasoning, tool calls and results."""
    yield "single", [{"role": "user", "content": "What is 2+2?"}]
    for k, u in enumerate(UNICODE):
        yield f"unicode{k}", [{"role": "user", "content": u}]
    yield "parts", [{"role": "user", "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second ✓"}]}]
    yield "null_user", [{"role": "user", "content": None}]
    yield "multi_reasoning", [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!", "reasoning_content": "greet back"},
                              {"role": "user", "content": "How are you?"}]
    yield "multi_reasoning_field", [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1", "reasoning": "r1"},
                                    {"role": "user", "content": "Q2"}, {"role": "assistant", "content": "A2", "reasoning_content": "r2"},
                                    {"role": "user", "content": "Q3 — ünïcödé"}]
    yield "ends_assistant", [{"role": "user", "content": "Tell me"}, {"role": "assistant", "content": "Sure:", "reasoning_content": "think first"}]
    yield "ends_assistant_empty_reasoning", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y", "reasoning": "", "reasoning_content": "z"}]
    for k, a in enumerate(ARGS):
        yield f"toolcall{k}", [{"role": "user", "content": "Use the tool"},
                               {"role": "assistant", "content": None, "tool_calls": [call(0, "get_weather", a)], "reasoning_content": "need data"},
                               {"role": "tool", "tool_call_id": "call_0", "content": json.dumps({"ok": k}) if k % 2 else f"result {k} ✓"},
                               {"role": "user", "content": "Thanks, and now?"}]
    yield "two_calls_ends_tool", [{"role": "user", "content": "Weather in two cities"},
                                  {"role": "assistant", "content": "Checking both.", "tool_calls": [call(0, "get_weather", {"city": "Oslo"}), call(1, "get_weather", {"city": "Lima"})], "reasoning_content": "two calls"},
                                  {"role": "tool", "tool_call_id": "call_0", "content": "-3°C"},
                                  {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "18°C"}, {"type": "text", "text": "sunny"}]}]
    yield "tool_then_answer", [{"role": "user", "content": "Search"},
                               {"role": "assistant", "content": "", "tool_calls": [call(0, "search_docs", {"query": "dsml"})]},
                               {"role": "tool", "tool_call_id": "call_0", "content": ""},
                               {"role": "assistant", "content": "Nothing found.", "reasoning_content": "empty result"}]
    yield "developer_last", [{"role": "developer", "content": "Be terse."}]
    yield "developer_then_user", [{"role": "developer", "content": "Be terse."}, {"role": "assistant", "content": "ok", "reasoning": "r"}, {"role": "user", "content": "Go"}]
    yield "empty_everything", [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}, {"role": "user", "content": ""}]


BAD = [
    ("bad_tool_first", [{"role": "user", "content": "x"}, {"role": "tool", "content": "orphan"}], None),
    ("bad_too_many_results", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call(0, "ping", {})]},
                              {"role": "tool", "content": "a"}, {"role": "tool", "content": "b"}], None),
    ("bad_args_not_json", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call(0, "ping", "{not json")]}], None),
    ("bad_args_list", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call(0, "ping", "[1,2]")]}], None),
    ("bad_developer_empty", [{"role": "developer", "content": ""}], None),
    ("bad_unknown_role", [{"role": "narrator", "content": "x"}], None),
    ("bad_thinking_no_reasoning", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}], {"thinking": True}),
    ("bad_thinking_developer_before_user", [{"role": "developer", "content": "d"}, {"role": "user", "content": "u"}], {"thinking": True}),
]


def bodies():
    out = []
    shapes = list(convs())
    n = 0
    for si, system in enumerate(SYSTEMS):
        for ti, tools in enumerate([None, [WEATHER], [WEATHER, SEARCH, BARE], [UNI_TOOL]]):
            for ki, kw in enumerate(THINKING):
                # a spread of the shapes over the combinations, every shape
                # under every thinking setting at least once
                for name, msgs in shapes[(si * 7 + ti * 3 + ki) % len(shapes)::9]:
                    msgs = copy.deepcopy(msgs)
                    if system is not None:
                        msgs = [{"role": "system", "content": system}] + msgs
                    body = {"model": "deepseek-v3.2", "messages": msgs}
                    if tools:
                        body["tools"] = tools
                    if kw is not None:
                        body["chat_template_kwargs"] = kw
                    out.append((f"{name}-s{si}-t{ti}-k{ki}-{n}", body))
                    n += 1
    for name, msgs, kw in BAD:
        body = {"model": "deepseek-v3.2", "messages": msgs}
        if kw:
            body["chat_template_kwargs"] = kw
        out.append((name, body))
    return out


if COUNT:
    for line in sys.stdin:
        rec = json.loads(line)
        body = rec.get("payload", rec)
        if "messages" not in body:
            continue
        print(len(TOK.encode(apply_chat_template(body), add_special_tokens=False).ids))
    sys.exit(0)

with gzip.open(out_path, "wt", encoding="utf-8") as f:
    f.write(json.dumps({"encoder": ENCODER_SOURCE, "encoder_sha256": hashlib.sha256(open(encoder_path, "rb").read()).hexdigest(),
                        "tokenizers": tokenizers.__version__, "python": sys.version.split()[0],
                        "tokenizer": "deepseek_v3 conformance tokenizer.json, ids 128798/128799 renamed <think>/</think>"}, ensure_ascii=False) + "\n")
    ok = bad = 0
    for name, body in bodies():
        rec = {"name": name, "body": body}
        try:
            prompt = apply_chat_template(body)
        except Exception as e:  # the encoder (or vLLM around it) raises: the server refuses the request
            rec["error"] = f"{type(e).__name__}: {e}"
            bad += 1
        else:
            ids = TOK.encode(prompt, add_special_tokens=False).ids
            rec.update(text=prompt, count=len(ids), ids=ids)
            ok += 1
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
print(f"{ok} rendered, {bad} refused", file=sys.stderr)
