#!/usr/bin/env python3
"""Reference prompts of chat requests to a Mistral-format (Tekken) model as
SGLang renders them.

Writes internal/serverprofile/testdata/mistral-sglang-expect.jsonl.gz: a first
line recording the versions, then one line per (tokenizer, body) with the
token ids and their count, or the error SGLang raises on it.

Nothing is transcribed: the bodies go through SGLang's own code, as installed
(sglang 0.5.23 with mistral-common 1.13.1, scripts/sglang/requirements.lock): a
model folder holding only the tokenizer's tekken.json (config.version set as
in mistral-ref.py), loaded by SGLang's get_tokenizer (a bare Tekken checkpoint:
transformers' MistralCommonTokenizer); the request validated by its
ChatCompletionRequest; OpenAIServingChat._process_messages (which picks the
tools by tool_choice) with the serving object's own probe of the prompt's text
round trip (lossy for mistral-common: the ids come from the tokenizer's
apply_chat_template(tokenize=True)). The content format is "string", what
SGLang's TemplateManager falls back to without a Jinja template. The serving
object is built without a server (object.__new__); only what that path reads
is set.

The corpus is the Tekken bodies of the vLLM expectations (mistral-expect.jsonl.gz)
plus bodies where SGLang differs (a final assistant message, continue_final_message,
text parts, tool-call arguments).

Usage: mistral-sglang-ref.py VLLM_EXPECT.jsonl.gz OUT.jsonl.gz
"""
import collections, copy, gzip, json, os, sys, tempfile

import mistral_common
import sglang
import transformers
from sglang.srt.entrypoints.openai import serving_chat
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
from sglang.srt.utils.hf_transformers.tokenizer import get_tokenizer

vllm_expect, out_path = sys.argv[1:3]
DATA = os.path.join(os.path.dirname(mistral_common.__file__), "data")


class _TemplateManager:
    jinja_template_content_format = "string"
    reasoning_config = None
    jinja_template_may_reorder_tool_results = False
    chat_template_name = None
    python_chat_template = None


def server(tekken, version):
    with open(os.path.join(DATA, tekken + ".json")) as f:
        data = json.load(f)
    data["config"]["version"] = version
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "tekken.json"), "w") as f:
        json.dump(data, f)

    class _TokenizerManager:
        tokenizer = get_tokenizer(folder)
        served_model_name = "m"

    chat = object.__new__(serving_chat.OpenAIServingChat)
    chat.tokenizer_manager = _TokenizerManager()
    chat.template_manager = _TemplateManager()
    chat.chat_encoding_spec = None
    chat._encoding_adapter = None
    chat.is_gpt_oss = chat.is_gemma4 = chat.is_minimax_m3 = False
    chat.reasoning_parser = chat.tool_call_parser = chat._reasoning_detector = None
    chat.default_chat_template_kwargs = {}
    try:
        chat._tokenizer_auto_adds_specials = len(chat.tokenizer_manager.tokenizer.encode("")) > 0
    except Exception:
        chat._tokenizer_auto_adds_specials = True
    chat._prompt_text_round_trip_is_lossy = chat._probe_prompt_text_round_trip()
    assert chat._prompt_text_round_trip_is_lossy, (tekken, version)
    chat._template_reads_reasoning_content = False
    chat._chat_template_cache = collections.OrderedDict()
    return chat


U = {"role": "user", "content": "What is the weather in Paris?"}
TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def call(args, cid="abcdefghi"):
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": "get_weather", "arguments": args}}]}


def parts(*texts):
    return [{"type": "text", "text": t} for t in texts]


EXTRA = {
    # a final assistant message: SGLang makes it a user message (_handle_last_assistant_message)
    "final-assistant": {"messages": [U, {"role": "assistant", "content": "It is sunny."}]},
    "final-assistant-only": {"messages": [{"role": "assistant", "content": "Hi"}]},
    "final-assistant-after-assistant": {"messages": [U, {"role": "assistant", "content": "One."}, {"role": "assistant", "content": "Two."}]},
    "final-assistant-system": {"messages": [{"role": "system", "content": "Be brief."}, U, {"role": "assistant", "content": "Sunny."}]},
    "final-assistant-tools": {"messages": [U, {"role": "assistant", "content": "Sunny."}], "tools": [TOOL]},
    "final-assistant-toolcall-content": {"messages": [U, dict(call('{"city": "Paris"}'), content="Checking.")], "tools": [TOOL]},
    "final-assistant-toolcall": {"messages": [U, call('{"city": "Paris"}')], "tools": [TOOL]},
    "final-assistant-parts": {"messages": [U, {"role": "assistant", "content": parts("It is", "sunny.")}]},
    "final-assistant-empty": {"messages": [U, {"role": "assistant", "content": ""}]},
    "final-assistant-agp-false": {"messages": [U, {"role": "assistant", "content": "It is"}], "add_generation_prompt": False},
    "continue-final": {"messages": [U, {"role": "assistant", "content": "It is"}], "continue_final_message": True, "add_generation_prompt": False},
    "continue-final-agp": {"messages": [U, {"role": "assistant", "content": "It is"}], "continue_final_message": True},
    "continue-final-space": {"messages": [U, {"role": "assistant", "content": " It is "}], "continue_final_message": True, "add_generation_prompt": False},
    "continue-final-user": {"messages": [U], "continue_final_message": True, "add_generation_prompt": False},
    "agp-false": {"messages": [U], "add_generation_prompt": False},
    # text parts: SGLang joins them with " " before mistral-common sees them
    "parts-user": {"messages": [{"role": "user", "content": parts("Hello", "world")}]},
    "parts-user-one": {"messages": [{"role": "user", "content": parts("Hello")}]},
    "parts-user-empty": {"messages": [{"role": "user", "content": parts("", "x")}]},
    "parts-user-newline": {"messages": [{"role": "user", "content": parts("a\n", "b")}]},
    "parts-system": {"messages": [{"role": "system", "content": parts("Be", "brief.")}, U]},
    "parts-assistant": {"messages": [U, {"role": "assistant", "content": parts("It", "is sunny.")}, {"role": "user", "content": "Thanks"}]},
    "parts-tool": {"messages": [U, call('{"city": "Paris"}'), {"role": "tool", "tool_call_id": "abcdefghi", "content": parts("22", "C")}], "tools": [TOOL]},
    # tool-call arguments: parsed to a dict by SGLang, written again by mistral-common
    "args-compact": {"messages": [U, call('{"city":"Paris","n":1}'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "22C"}], "tools": [TOOL]},
    "args-nonascii": {"messages": [U, call('{"city": "Zürich"}'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "22C"}], "tools": [TOOL]},
    "args-escaped": {"messages": [U, call('{"city": "Z\\u00fcrich\\/x"}'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "22C"}], "tools": [TOOL]},
    "args-nested": {"messages": [U, call('{"a": {"b": [1, 2.5, true, null]}, "c": 1e3}'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}], "tools": [TOOL]},
    "args-empty-object": {"messages": [U, call('{}'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}], "tools": [TOOL]},
    "args-empty-string": {"messages": [U, call(''), {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}], "tools": [TOOL]},
    "args-array": {"messages": [U, call('[1]'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}], "tools": [TOOL]},
    "args-invalid": {"messages": [U, call('{"a":'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}], "tools": [TOOL]},
    "args-space": {"messages": [U, call(' {"a": 1} '), {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}], "tools": [TOOL]},
    "args-dup-key": {"messages": [U, call('{"a": 1, "a": 2}'), {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}], "tools": [TOOL]},
    "tool-choice-none": {"messages": [U], "tools": [TOOL], "tool_choice": "none"},
}

servers = {}
keys = []
bodies = []
with gzip.open(vllm_expect, "rt", encoding="utf-8") as f:
    next(f)
    for line in f:
        c = json.loads(line)
        key = (c["tekken"], c["version"])
        if key not in keys:
            keys.append(key)
        bodies.append((key, c["name"], c["body"]))
for key in keys:
    for name, body in EXTRA.items():
        bodies.append((key, "sglang-" + name, body))

with gzip.open(out_path, "wt", encoding="utf-8", compresslevel=9) as out:
    out.write(json.dumps({"sglang": sglang.__version__, "transformers": transformers.__version__,
                          "mistral_common": mistral_common.__version__,
                          "python": sys.version.split()[0],
                          "path": "get_tokenizer (bare tekken.json: MistralCommonTokenizer), OpenAIServingChat._process_messages, content format string"}) + "\n")
    for key, name, body in bodies:
        if key not in servers:
            servers[key] = server(*key)
        rec = {"tekken": key[0], "version": key[1], "name": name, "body": body}
        try:
            req = ChatCompletionRequest.model_validate(dict(copy.deepcopy(body), model="m"))
            res = servers[key]._process_messages(req, False)
            ids = list(res.prompt_ids)
            rec["count"] = len(ids)
            rec["ids"] = ids
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:300]
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
