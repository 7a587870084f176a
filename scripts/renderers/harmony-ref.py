#!/usr/bin/env python3
"""Reference prompts of gpt-oss chat requests as vLLM renders them (Harmony).

Writes internal/serverprofile/testdata/harmony-expect.jsonl.gz: one line per
chat body of the corpus below, with the token ids openai_harmony renders
for it and their count, and a first line recording the versions.

The rendering is the real openai_harmony (render_conversation_for_completion,
HARMONY_GPT_OSS). vLLM cannot be installed here, so the few lines that turn
a chat request into Harmony messages are vLLM main's harmony_utils.py
(index id 66806705518: extract_instructions_from_messages,
build_harmony_preamble, get_system_message, get_developer_message,
parse_chat_inputs_to_harmony_messages, auto_drop_analysis_messages,
flatten_input_text_content) transcribed below with the environment
variables unset; serving_chat's _make_request_with_harmony calls them in
that order.

openai_harmony loads the o200k_base ranks from the network; here they are
built from the gptoss conformance tokenizer.json (its byte-level vocabulary
is o200k_base's, ranks 0..199997), written as o200k_base.tiktoken into a
temporary folder named by TIKTOKEN_ENCODINGS_BASE. openai_harmony checks the
file's SHA-256 (446a9538...), so a wrong vocabulary would fail to load.

Usage: harmony-ref.py MODEL_DIR OUT.jsonl.gz     the corpus expectations
       harmony-ref.py --count MODEL_DIR < RECORDS  one count per line of
           chat bodies or send records (their "payload"), with
           VLLM_SYSTEM_START_DATE (default 2026-01-02) as the start date
"""
import base64, datetime, gzip, json, os, sys, tempfile
from types import SimpleNamespace

NOW = "2026-01-02"  # the conversation start date (VLLM_SYSTEM_START_DATE)


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def write_ranks(tokenizer_json, folder):
    dec = bytes_to_unicode()
    vocab = json.load(open(tokenizer_json, encoding="utf-8"))["model"]["vocab"]
    with open(os.path.join(folder, "o200k_base.tiktoken"), "w") as f:
        for tok, rank in sorted(vocab.items(), key=lambda kv: kv[1]):
            f.write(base64.b64encode(bytes(dec[c] for c in tok)).decode() + " " + str(rank) + "\n")


COUNT = sys.argv[1] == "--count"
if COUNT:
    model_dir, out_path = sys.argv[2], None
    NOW = os.environ.get("VLLM_SYSTEM_START_DATE", NOW)
else:
    model_dir, out_path = sys.argv[1], sys.argv[2]
ranks_dir = tempfile.mkdtemp()
write_ranks(os.path.join(model_dir, "tokenizer.json"), ranks_dir)
os.environ["TIKTOKEN_ENCODINGS_BASE"] = ranks_dir

import openai_harmony  # noqa: E402
from openai_harmony import (  # noqa: E402
    Author, Conversation, DeveloperContent, HarmonyEncodingName, Message,
    ReasoningEffort, Role, SystemContent, TextContent, ToolDescription,
    load_harmony_encoding,
)

ENC = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
REASONING_EFFORT = {"high": ReasoningEffort.HIGH, "medium": ReasoningEffort.MEDIUM, "low": ReasoningEffort.LOW}

# ---- vLLM harmony_utils.py (transcribed; see the docstring) ----

def get_system_message(reasoning_effort=None, start_date=None):
    c = SystemContent.new()
    if reasoning_effort is not None:
        if reasoning_effort not in REASONING_EFFORT:
            raise ValueError(f"reasoning_effort={reasoning_effort!r} is not supported by Harmony")
        c = c.with_reasoning_effort(REASONING_EFFORT[reasoning_effort])
    c = c.with_conversation_start_date(start_date or NOW)
    return Message.from_role_and_content(Role.SYSTEM, c)


def create_tool_definition(tool):
    return ToolDescription.new(name=tool.function.name, description=tool.function.description or "",
                               parameters=tool.function.parameters)


def get_developer_message(instructions=None, tools=None):
    c = DeveloperContent.new()
    if instructions is not None:
        c = c.with_instructions(instructions)
    if tools is not None:
        fts = []
        for tool in tools:
            if tool.type in ("web_search_preview", "code_interpreter", "container"):
                pass
            elif tool.type == "function":
                fts.append(tool)
            else:
                raise ValueError(f"tool type {tool.type} not supported")
        if fts:
            c = c.with_function_tools([create_tool_definition(t) for t in fts])
    return Message.from_role_and_content(Role.DEVELOPER, c)


def flatten_input_text_content(content):
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = []
    for item in content:
        if isinstance(item, str):
            texts.append(item)
            continue
        if isinstance(item, dict):
            text = item.get("text")
            if text is not None:
                texts.append(text)
    return "".join(texts) if texts else None


def extract_instructions_from_messages(messages):
    rest = list(messages)
    if not rest:
        return None, rest
    first = rest[0]
    if first.get("role") not in ("system", "developer"):
        return None, rest
    return flatten_input_text_content(first.get("content")), rest[1:]


def build_harmony_preamble(instructions=None, tools=None, reasoning_effort=None):
    msgs = [get_system_message(reasoning_effort=reasoning_effort)]
    if instructions or tools:
        msgs.append(get_developer_message(instructions=instructions, tools=tools))
    return msgs


def parse_chat_input_to_harmony_message(chat_msg, tool_id_names):
    role = chat_msg.get("role")
    msgs = []
    tool_calls = chat_msg.get("tool_calls", [])
    if role == "assistant" and tool_calls:
        content = flatten_input_text_content(chat_msg.get("content"))
        if content:
            msgs.append(Message.from_role_and_content(Role.ASSISTANT, content).with_channel("commentary"))
        reasoning = chat_msg.get("reasoning")
        if reasoning:
            msgs.append(Message.from_role_and_content(Role.ASSISTANT, reasoning).with_channel("analysis"))
        for call in tool_calls:
            func = call.get("function", {})
            name = func.get("name", "")
            arguments = func.get("arguments", "") or ""
            msgs.append(Message.from_role_and_content(Role.ASSISTANT, arguments).with_channel("commentary")
                        .with_recipient(f"functions.{name}").with_content_type("json"))
        return msgs
    if role == "tool":
        name = tool_id_names.get(chat_msg.get("tool_call_id", ""), "")
        content = flatten_input_text_content(chat_msg.get("content")) or ""
        return [Message.from_author_and_content(Author.new(Role.TOOL, f"functions.{name}"), content)
                .with_channel("commentary").with_recipient("assistant")]
    reasoning = chat_msg.get("reasoning")
    if role == "assistant" and reasoning:
        msgs.append(Message.from_role_and_content(Role.ASSISTANT, reasoning).with_channel("analysis"))
    content = chat_msg.get("content") or ""
    if isinstance(content, str):
        contents = [TextContent(text=content)]
    else:
        contents = [TextContent(text=c.get("text", "")) for c in content]
    if role == "assistant" and contents and contents[0].text:
        msgs.append(Message.from_role_and_contents(role, contents).with_channel("final"))
    elif role in ("system", "developer"):
        instructions = flatten_input_text_content(chat_msg.get("content"))
        if instructions is not None:
            msgs.append(get_developer_message(instructions=instructions))
    elif role != "assistant":
        msgs.append(Message.from_role_and_contents(role, contents))
    return msgs


def auto_drop_analysis_messages(msgs):
    last = -1
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].author.role == "assistant" and msgs[i].channel == "final":
            last = i
            break
    return [m for i, m in enumerate(msgs) if not (i < last and m.channel == "analysis")]


def parse_chat_inputs_to_harmony_messages(chat_msgs):
    tool_id_names = {}
    for m in chat_msgs:
        for tc in m.get("tool_calls", []):
            tool_id_names[tc.get("id")] = tc.get("function", {}).get("name")
    msgs = []
    for m in chat_msgs:
        msgs.extend(parse_chat_input_to_harmony_message(m, tool_id_names))
    return auto_drop_analysis_messages(msgs)


def make_request_with_harmony(body):
    tools = None
    if body.get("tools") is not None:
        tools = [SimpleNamespace(type=t["type"], function=SimpleNamespace(
            name=t["function"]["name"], description=t["function"].get("description"),
            parameters=t["function"].get("parameters"))) for t in body["tools"]]
    effort = body.get("reasoning_effort")
    if effort == "none":
        raise ValueError("Harmony does not support reasoning_effort='none'")
    instructions, rest = extract_instructions_from_messages(body["messages"])
    msgs = build_harmony_preamble(instructions=instructions, tools=tools, reasoning_effort=effort)
    msgs.extend(parse_chat_inputs_to_harmony_messages(rest))
    return ENC.render_conversation_for_completion(Conversation.from_messages(msgs), Role.ASSISTANT)

# ---- the corpus ----

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.",
           "parameters": {"type": "object", "properties": {
               "city": {"type": "string", "description": "The city name"},
               "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}},
               "required": ["city"]}}}
SEARCH = {"type": "function", "function": {"name": "search_docs", "description": "Search the documentation.\nReturns the best matches.",
          "parameters": {"type": "object", "properties": {
              "query": {"type": "string", "title": "Query", "examples": ["install", "quota"]},
              "limit": {"type": "integer", "default": 5, "description": "How many results"},
              "filters": {"type": "object", "description": "Narrow the search", "properties": {
                  "lang": {"type": ["string", "null"]},
                  "tags": {"type": "array", "items": {"type": "string"}},
                  "since": {"type": "number", "nullable": True, "default": 1.5}}},
              "mode": {"description": "Search mode", "oneOf": [
                  {"type": "string", "enum": ["fast", "deep"], "description": "A named mode"},
                  {"type": "integer", "description": "A depth", "default": 2}]},
              "raw": {"type": "array"},
              "flag": {"type": "boolean", "default": False}},
              "required": ["query", "mode"]}}}
NOPARAMS = {"type": "function", "function": {"name": "now", "description": "The time."}}
NODESC = {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}
UNION = {"type": "function", "function": {"name": "pick", "description": "Pick one.",
         "parameters": {"oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "description": "by a"},
                                  {"type": "object", "properties": {"b": {"type": "number"}}, "default": {"b": 1}}]}}}
TOOLSETS = [None, [WEATHER], [WEATHER, SEARCH], [NOPARAMS, NODESC], [SEARCH, UNION], []]

SYSTEMS = [None, ("system", "You are a terse assistant."), ("developer", "Answer in French."),
           ("system", ""), ("system", [{"type": "text", "text": "Part one. "}, {"type": "text", "text": "Part two."}]),
           ("developer", "Règles: réponds en 日本語 😀\nLigne deux.")]

USERS = ["Hello!", "What is the weather in Paris?", "", "Ünïcödé — 你好，世界 🌍 \u00a0tabs\tand\nnewlines  ",
         [{"type": "text", "text": "Look at "}, {"type": "text", "text": "this."}],
         "A longer question about the meaning of life, the universe and everything; please think step by step."]

EFFORTS = [None, "low", "medium", "high"]


def call(id_, name, args):
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": args}}


def conversations(user, i):
    """Turn shapes: first turn, multi-turn with earlier reasoning, tool round trips."""
    yield [{"role": "user", "content": user}]
    yield [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
           {"role": "user", "content": user}]
    yield [{"role": "user", "content": "Hi"},
           {"role": "assistant", "content": "Hello!", "reasoning": "The user greets me; greet back."},
           {"role": "user", "content": user},
           {"role": "assistant", "content": "Second answer.", "reasoning": "Thinking about turn two."},
           {"role": "user", "content": "And then?"}]
    yield [{"role": "user", "content": user},
           {"role": "assistant", "content": None, "reasoning": "I should call the weather tool.",
            "tool_calls": [call(f"call_{i}", "get_weather", '{"city": "Paris"}')]},
           {"role": "tool", "tool_call_id": f"call_{i}", "content": '{"temp": 21, "sky": "clear"}'}]
    yield [{"role": "user", "content": user},
           {"role": "assistant", "content": "Let me check two things.",
            "tool_calls": [call("a1", "get_weather", '{"city": "Oslo"}'), call("a2", "search_docs", '{"query": "fjord"}')]},
           {"role": "tool", "tool_call_id": "a1", "content": [{"type": "text", "text": "cold"}]},
           {"role": "tool", "tool_call_id": "a2", "content": "no results"},
           {"role": "assistant", "content": "It is cold in Oslo.", "reasoning": "Summarise."},
           {"role": "user", "content": "Thanks. " + (user if isinstance(user, str) else "")}]
    yield [{"role": "user", "content": user}, {"role": "assistant", "content": "", "reasoning": "Only thinking so far."}]
    yield [{"role": "user", "content": user}, {"role": "system", "content": "A late system message."},
           {"role": "developer", "content": [{"type": "text", "text": "late developer"}]},
           {"role": "user", "content": None}]


def corpus():
    n = 0
    for ui, user in enumerate(USERS):
        for ci, conv in enumerate(conversations(user, ui)):
            sys_ = SYSTEMS[(ui + ci) % len(SYSTEMS)]
            tools = TOOLSETS[(ui * 3 + ci) % len(TOOLSETS)]
            effort = EFFORTS[(ui + 2 * ci) % len(EFFORTS)]
            msgs = ([{"role": sys_[0], "content": sys_[1]}] if sys_ else []) + conv
            body = {"model": "gpt-oss", "messages": msgs}
            if tools is not None:
                body["tools"] = tools
            if effort is not None:
                body["reasoning_effort"] = effort
            n += 1
            yield f"h{n:03d}", body
            # The same conversation under every system message and tool set.
            for sj, s2 in enumerate(SYSTEMS):
                if s2 == sys_:
                    continue
                b2 = dict(body)
                b2["messages"] = ([{"role": s2[0], "content": s2[1]}] if s2 else []) + conv
                b2["tools"] = TOOLSETS[(sj + ci) % len(TOOLSETS)]
                if b2["tools"] is None:
                    del b2["tools"]
                n += 1
                yield f"h{n:03d}", b2


if COUNT:
    for line in sys.stdin:
        rec = json.loads(line)
        body = rec.get("payload", rec)
        print(len(make_request_with_harmony(body)))
    sys.exit(0)

with gzip.open(out_path, "wt", encoding="utf-8") as out:
    out.write(json.dumps({"versions": {"openai-harmony": openai_harmony.__version__ if hasattr(openai_harmony, "__version__") else "0.0.8",
                                       "vllm harmony_utils.py": "main, index id 66806705518",
                                       "python": sys.version.split()[0]},
                          "now": NOW}, ensure_ascii=False) + "\n")
    count = 0
    for name, body in corpus():
        ids = make_request_with_harmony(body)
        out.write(json.dumps({"name": name, "body": body, "count": len(ids), "ids": ids}, ensure_ascii=False) + "\n")
        count += 1
print(f"wrote {count} bodies to {out_path}", file=sys.stderr)
