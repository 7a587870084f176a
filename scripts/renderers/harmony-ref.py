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

Responses bodies (harmony-ref.py --responses) go the way vLLM main's
responses/serving.py (@0001948b: _make_request_with_harmony,
_construct_input_messages_with_harmony, _extract_system_message_from_request)
and responses/harmony.py (@004ae2c0: response_input_to_harmony,
construct_harmony_previous_input_messages) make them Harmony messages,
transcribed below; the request is first validated as ResponsesRequest
validates it (its function_call_parsing, then pydantic over the real openai
types of the pinned openai package), so that each item is the dict or the
model vLLM's code sees. No tool server, environment variables unset.

Usage: harmony-ref.py MODEL_DIR OUT.jsonl.gz     the corpus expectations
       harmony-ref.py --responses MODEL_DIR OUT.jsonl.gz   the Responses corpus
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
RESPONSES = sys.argv[1] == "--responses"
if RESPONSES:
    model_dir, out_path = sys.argv[2], sys.argv[3]
elif COUNT:
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

def get_system_message(reasoning_effort=None, start_date=None, model_identity=None):
    c = SystemContent.new()
    if model_identity is not None:
        c = c.with_model_identity(model_identity)
    if reasoning_effort is not None:
        if reasoning_effort not in REASONING_EFFORT:
            raise ValueError(f"reasoning_effort={reasoning_effort!r} is not supported by Harmony")
        c = c.with_reasoning_effort(REASONING_EFFORT[reasoning_effort])
    c = c.with_conversation_start_date(start_date or NOW)
    return Message.from_role_and_content(Role.SYSTEM, c)


def create_tool_definition(tool):
    if not hasattr(tool, "function"):  # a Responses FunctionTool
        return ToolDescription.new(name=tool.name, description=tool.description or "", parameters=tool.parameters)
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
    # Content that spells Harmony's special tokens: openai_harmony encodes
    # a message's text ordinarily, so they are text.
    for body in ({"model": "gpt-oss", "messages": [{"role": "user", "content": "a <|end|> b <|start|>x"}]},
                 {"model": "gpt-oss", "messages": [{"role": "system", "content": "Say <|channel|>final<|message|> never."},
                                                   {"role": "user", "content": [{"type": "text", "text": "<|return|>"}, {"type": "text", "text": "<|call|>"}]}],
                  "tools": [WEATHER]},
                 {"model": "gpt-oss", "messages": [{"role": "user", "content": "go"},
                                                   {"role": "assistant", "content": None, "reasoning": "<|start|>assistant<|message|>",
                                                    "tool_calls": [call("s1", "get_weather", '{"city": "<|end|>"}')]},
                                                   {"role": "tool", "tool_call_id": "s1", "content": "<|constrain|>json <|endoftext|>"}]}):
        n += 1
        yield f"h{n:03d}", body


# ---- vLLM's Responses path under Harmony (transcribed; see the docstring) ----

from typing import Any  # noqa: E402

from openai.types.responses import ResponseFunctionToolCall, ResponseInputItemParam, ResponseOutputItem  # noqa: E402
from openai.types.responses.response import ToolChoice  # noqa: E402
from openai.types.responses.tool import Tool  # noqa: E402
from openai.types.shared import Reasoning  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, ValidationError  # noqa: E402
import openai  # noqa: E402
import pydantic  # noqa: E402

MCP_BUILTIN_TOOLS = {"code_interpreter", "web_search_preview", "container"}


class ResponsesRequest(BaseModel):
    """The members of vLLM's ResponsesRequest (responses/protocol.py @010a69ce)
    that its Harmony path reads, with their types."""
    model_config = ConfigDict(extra="allow")
    input: str | list[ResponseInputItemParam | ResponseOutputItem]
    instructions: str | None = None
    reasoning: Reasoning | None = None
    tool_choice: ToolChoice = "auto"
    tools: list[Tool] = Field(default_factory=list)
    previous_input_messages: list[dict] | None = None


def function_call_parsing(data):
    """ResponsesRequest.function_call_parsing (mode="before")."""
    items = data.get("input")
    if items is None or isinstance(items, (str, bytes)) or not isinstance(items, list):
        return data
    out = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "function_call":
            try:
                out.append(ResponseFunctionToolCall(**item))
            except ValidationError:
                out.append(item)
        else:
            out.append(item)
    data = dict(data)
    data["input"] = out
    return data


def extract_tool_types(tools):
    # VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS unset: an mcp tool adds nothing.
    return {t.type for t in tools if t.type != "mcp"}


def get_system_or_developer_message(role, instructions):
    return get_developer_message(instructions=instructions)  # the environment variable unset


def extract_system_message_from_request(request):
    system_msg = None
    if not isinstance(request.input, str):
        for response_msg in request.input:
            if isinstance(response_msg, dict) and response_msg.get("role") == "system":
                content = response_msg.get("content")
                if isinstance(content, str):
                    system_msg = content
                elif isinstance(content, list):
                    for param in content:
                        if isinstance(param, dict) and param.get("type") == "input_text":
                            system_msg = param.get("text")
                            break
                break
    return system_msg


def response_input_to_harmony(response_msg, prev_responses):
    if not isinstance(response_msg, dict):
        response_msg = response_msg.model_dump()
    if "type" not in response_msg or response_msg["type"] == "message":
        role = response_msg["role"]
        content = response_msg["content"]
        if role in ("system", "developer"):
            text = flatten_input_text_content(content)
            if text:
                msg = get_system_or_developer_message(role, text)
            else:
                return None
        elif isinstance(content, str):
            msg = Message.from_role_and_content(role, content)
        else:
            contents = [TextContent(text=c.get("text", "")) for c in content]
            msg = Message.from_role_and_contents(role, contents)
        if role == "assistant":
            msg = msg.with_channel("final")
    elif response_msg["type"] == "function_call_output":
        call_id = response_msg["call_id"]
        call_response = None
        for prev in reversed(prev_responses):
            if isinstance(prev, ResponseFunctionToolCall) and prev.call_id == call_id:
                call_response = prev
                break
        if call_response is None:
            raise ValueError(f"No call message found for {call_id}")
        msg = Message.from_author_and_content(Author.new(Role.TOOL, f"functions.{call_response.name}"), response_msg["output"])
        msg = msg.with_channel("commentary").with_recipient("assistant")
    elif response_msg["type"] == "reasoning":
        content = response_msg.get("content")
        if content and len(content) >= 1:
            msg = Message.from_role_and_content(Role.ASSISTANT, "\n".join(item["text"] for item in content))
            msg = msg.with_channel("analysis")
        else:
            return None
    elif response_msg["type"] == "function_call":
        msg = Message.from_role_and_content(Role.ASSISTANT, response_msg["arguments"])
        msg = msg.with_channel("commentary").with_recipient(f"functions.{response_msg['name']}").with_content_type("json")
    else:
        raise ValueError(f"Unknown input type: {response_msg['type']}")
    return msg


def parse_harmony_format_message(chat_msg):
    author = chat_msg["author"]
    role, name = author.get("role"), author.get("name")
    raw = chat_msg.get("content", "")
    if isinstance(raw, list):
        contents = [TextContent(text=c.get("text", "")) for c in raw]
    elif isinstance(raw, str):
        contents = [TextContent(text=raw)]
    else:
        contents = [TextContent(text="")]
    if name:
        msg = Message(author=Author.new(Role(role), name), content=contents)
    else:
        msg = Message.from_role_and_contents(Role(role), contents)
    if chat_msg.get("channel"):
        msg = msg.with_channel(chat_msg["channel"])
    if chat_msg.get("recipient"):
        msg = msg.with_recipient(chat_msg["recipient"])
    if chat_msg.get("content_type"):
        msg = msg.with_content_type(chat_msg["content_type"])
    return msg


def parse_chat_format_message(chat_msg):
    role = chat_msg.get("role")
    if role is None:
        raise ValueError(f"Message has no 'role' key: {chat_msg}")
    tool_calls = chat_msg.get("tool_calls")
    if role == "assistant" and tool_calls:
        msgs = []
        for call in tool_calls:
            func = call.get("function", {})
            msgs.append(Message.from_role_and_content(Role.ASSISTANT, func.get("arguments", "") or "")
                        .with_channel("commentary").with_recipient(f"functions.{func.get('name', '')}").with_content_type("json"))
        return msgs
    if role == "tool":
        name = chat_msg.get("name", "")
        if name and not name.startswith("functions."):
            name = f"functions.{name}"
        content = flatten_input_text_content(chat_msg.get("content")) or ""
        return [Message.from_author_and_content(Author.new(Role.TOOL, name), content)
                .with_channel("commentary").with_recipient("assistant")]
    if role in ("system", "developer"):
        text = flatten_input_text_content(chat_msg.get("content"))
        return [get_system_or_developer_message(role, text)] if text else []
    content = chat_msg.get("content", "")
    if isinstance(content, str):
        contents = [TextContent(text=content)]
    else:
        contents = [TextContent(text=c.get("text", "")) for c in content]
    return [Message.from_role_and_contents(role, contents)]


def construct_harmony_previous_input_messages(request):
    messages = []
    for message in request.previous_input_messages or []:
        if "author" in message and isinstance(message.get("author"), dict):
            hms = [parse_harmony_format_message(message)]
        else:
            hms = parse_chat_format_message(message)
        messages.extend(m for m in hms if m.author.role not in (Role.SYSTEM, Role.DEVELOPER))
    return messages


def make_responses_request_with_harmony(body):
    request = ResponsesRequest.model_validate(function_call_parsing(body))
    if request.tool_choice not in ("auto", "none"):
        raise NotImplementedError("Only 'auto' or 'none' tool_choice is supported in response API with Harmony")
    tool_types = extract_tool_types(request.tools)
    with_custom_tools = not tool_types.issubset(MCP_BUILTIN_TOOLS)
    effort = request.reasoning.effort if request.reasoning else None
    # No tool server: no browser, python or container descriptions; the
    # instructions go to the system message only with the environment
    # variable set.
    messages = [get_system_message(reasoning_effort=effort, model_identity=extract_system_message_from_request(request))]
    if with_custom_tools:
        messages.append(get_developer_message(instructions=request.instructions, tools=request.tools))
    messages += construct_harmony_previous_input_messages(request)
    if isinstance(request.input, str):
        if request.input or not request.previous_input_messages:
            messages.append(Message.from_role_and_content(Role.USER, request.input))
    else:
        prev_outputs = []
        for item in request.input:
            new_msg = response_input_to_harmony(item, prev_outputs)
            if new_msg is not None and new_msg.author.role != "system":
                messages.append(new_msg)
            if isinstance(item, ResponseFunctionToolCall):
                prev_outputs.append(item)
    return ENC.render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT)


def render_any(body):
    if "input" in body:
        return make_responses_request_with_harmony(body)
    return make_request_with_harmony(body)

# ---- the Responses corpus ----

FLAT = lambda t: {"type": "function", **t["function"]}  # noqa: E731  a chat tool as a Responses FunctionTool
R_TOOLSETS = [[], [FLAT(WEATHER)], [FLAT(WEATHER), FLAT(SEARCH)], [{"type": "web_search_preview"}],
              [{"type": "web_search_preview"}, FLAT(NODESC)], [FLAT(UNION), FLAT(NOPARAMS)]]
R_INSTRUCTIONS = [None, "Answer briefly.", "", "Réponds en français — 日本語も 😀\nSecond line."]
R_REASONING = [None, {"effort": "low"}, {"effort": "high"}, {"effort": "medium", "summary": "auto"}]


def r_inputs(user, i):
    """Input shapes: a string, messages (easy and typed), a system or
    developer item, earlier turns, reasoning, function calls and their outputs."""
    yield user if isinstance(user, str) else "Plain string input."
    yield [{"role": "user", "content": user}]
    yield [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Part one. "}, {"type": "input_text", "text": "Part two."}]}]
    yield [{"role": "system", "content": "You are a pirate."}, {"role": "user", "content": user}]
    yield [{"role": "system", "content": [{"type": "input_text", "text": "Sys A. "}, {"type": "input_text", "text": "Sys B."}]},
           {"role": "developer", "content": "Be kind."}, {"role": "user", "content": user}]
    yield [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": user}]
    yield [{"role": "user", "content": user},
           {"type": "reasoning", "id": f"rs_{i}", "summary": [], "content": [{"type": "reasoning_text", "text": "I should call the weather tool."}]},
           {"type": "function_call", "call_id": f"call_{i}", "name": "get_weather", "arguments": '{"city": "Paris"}'},
           {"type": "function_call_output", "call_id": f"call_{i}", "output": '{"temp": 21, "sky": "clear"}'}]
    yield [{"role": "user", "content": user},
           {"type": "function_call", "call_id": "a1", "name": "get_weather", "arguments": '{"city": "Oslo"}', "id": "fc_1", "status": "completed"},
           {"type": "function_call", "call_id": "a2", "name": "search_docs", "arguments": '{"query": "fjord"}'},
           {"type": "function_call_output", "call_id": "a2", "output": "no results"},
           {"type": "function_call_output", "call_id": "a1", "output": "cold"},
           {"type": "reasoning", "id": "rs_x", "summary": [{"type": "summary_text", "text": "ignored"}],
            "content": [{"type": "reasoning_text", "text": "Two results."}, {"type": "reasoning_text", "text": "Summarise them."}]},
           {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "It is cold in Oslo.", "annotations": []}]},
           {"role": "user", "content": "Thanks. " + (user if isinstance(user, str) else "")}]
    yield [{"role": "user", "content": user}, {"type": "reasoning", "id": "rs_e", "summary": []},
           {"role": "assistant", "content": ""}, {"role": "user", "content": ""}]


def r_corpus():
    n = 0
    for ui, user in enumerate(USERS):
        if not isinstance(user, str):  # chat "text" parts are Responses "input_text" parts
            user = [{"type": "input_text", "text": p["text"]} for p in user]
        for ci, inp in enumerate(r_inputs(user, ui)):
            body = {"model": "gpt-oss", "input": inp}
            ins = R_INSTRUCTIONS[(ui + ci) % len(R_INSTRUCTIONS)]
            if ins is not None:
                body["instructions"] = ins
            tools = R_TOOLSETS[(ui * 2 + ci) % len(R_TOOLSETS)]
            if tools:
                body["tools"] = tools
            r = R_REASONING[(ui + 3 * ci) % len(R_REASONING)]
            if r is not None:
                body["reasoning"] = r
            n += 1
            yield f"r{n:03d}", body
    # vLLM's previous_input_messages: chat-format and Harmony-format history.
    chat_hist = [{"role": "system", "content": "dropped"}, {"role": "user", "content": "What is the weather?"},
                 {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
                 {"role": "tool", "name": "get_weather", "content": [{"type": "text", "text": "sunny"}]},
                 {"role": "assistant", "content": "Sunny in Rome."}]
    harmony_hist = [{"author": {"role": "user"}, "content": [{"type": "text", "text": "Hi there"}]},
                    {"author": {"role": "assistant"}, "channel": "analysis", "content": [{"type": "text", "text": "Greet."}]},
                    {"author": {"role": "assistant"}, "channel": "commentary", "recipient": "functions.get_weather", "content_type": "json",
                     "content": '{"city": "Nice"}'},
                    {"author": {"role": "tool", "name": "functions.get_weather"}, "channel": "commentary", "recipient": "assistant", "content": "warm"},
                    {"author": {"role": "developer"}, "content": "dropped"}]
    for hist in (chat_hist, harmony_hist):
        for inp in ("And tomorrow?", "", [{"role": "user", "content": "And tomorrow?"}]):
            for tools in ([], [FLAT(WEATHER)]):
                body = {"model": "gpt-oss", "input": inp, "previous_input_messages": hist}
                if tools:
                    body["tools"] = tools
                    body["instructions"] = "Use the tools."
                n += 1
                yield f"r{n:03d}", body
    # Requests vLLM refuses (the reference's error is kept).
    for body in ({"model": "gpt-oss", "input": "x", "tool_choice": "required", "tools": [FLAT(WEATHER)]},
                 {"model": "gpt-oss", "input": [{"type": "function_call_output", "call_id": "nope", "output": "x"}]},
                 {"model": "gpt-oss", "input": "x", "reasoning": {"effort": "minimal"}},
                 {"model": "gpt-oss", "input": "x", "tools": [FLAT(WEATHER), {"type": "file_search", "vector_store_ids": ["v"]}]}):
        n += 1
        yield f"r{n:03d}", body


if RESPONSES:
    with gzip.open(out_path, "wt", encoding="utf-8") as out:
        out.write(json.dumps({"versions": {"openai-harmony": "0.0.8", "openai": openai.__version__, "pydantic": pydantic.__version__,
                                           "vllm responses/serving.py": "main @0001948b", "vllm responses/harmony.py": "main @004ae2c0",
                                           "vllm harmony_utils.py": "main, index id 66806705518",
                                           "python": sys.version.split()[0]},
                              "now": NOW}, ensure_ascii=False) + "\n")
        count = 0
        for name, body in r_corpus():
            try:
                ids = make_responses_request_with_harmony(body)
            except Exception as e:  # vLLM answers these with an error
                out.write(json.dumps({"name": name, "body": body, "error": f"{type(e).__name__}: {e}"[:300]}, ensure_ascii=False) + "\n")
                continue
            out.write(json.dumps({"name": name, "body": body, "count": len(ids), "ids": ids}, ensure_ascii=False) + "\n")
            count += 1
    print(f"wrote {count} Responses bodies to {out_path}", file=sys.stderr)
    sys.exit(0)


if COUNT:
    for line in sys.stdin:
        rec = json.loads(line)
        body = rec.get("payload", rec)
        if "messages" not in body and "input" not in body:
            continue  # send's run record, say: not a request
        print(len(render_any(body)))
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
