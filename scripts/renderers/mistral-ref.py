#!/usr/bin/env python3
"""Expectations of the Mistral renderer: the token ids vLLM's own
MistralTokenizer (vllm/tokenizers/mistral.py, over transformers'
MistralCommonBackend and mistral-common) encodes for each corpus chat body,
after what vLLM's online renderer does first (truncate_tool_call_ids),
with add_generation_prompt as a chat request's default. Run it with the
vLLM CPU venv of scripts/vllm (vllm 0.32.0, transformers 5.19.0,
mistral-common 1.13.1; the versions are recorded in the output).

The conformance vocabularies are the two Tekken files mistral-common ships
(tekken_240718.json, tekken_240911.json; both declare version v3). The same
vocabulary is also loaded as tokenizer version v7 (the file's config.version
rewritten), which mistral-common accepts: v7 needs only the default special
tokens. v11 and v13 need [ARGS]/[CALL_ID]/[THINK], which these files lack.

The SentencePiece expectations (--sentencepiece) encode the same corpus with
mistral-common's shipped SentencePiece models v3 and v7
(mistral_instruct_tokenizer_240323.model.v3, _241114.model.v7), each alone
in a folder as tokenizer.model.vN.

usage: mistral-ref.py OUT.jsonl.gz  (make renderers-reference-mistral)
       mistral-ref.py --sentencepiece OUT.jsonl.gz
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

import copy
import types
from importlib.metadata import version as pkg_version

import mistral_common
from vllm.tokenizers.mistral import MistralTokenizer, truncate_tool_call_ids

DATA = os.path.join(os.path.dirname(mistral_common.__file__), "data")

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "lookup_unicode", "description": "Ünïcode tool — 検索",
                                      "parameters": {"type": "object", "properties": {"q": {"type": "string", "description": "クエリ"}}}}},
]

TEXTS = [
    "Hello!", "What is the capital of France?", "", " leading and trailing  ",
    "Ünïcödé — 日本語のテキスト、絵文字 😀🎉 and Ελληνικά", "line one\nline two\n\n  indented",
    "[INST] not a special token [/INST] </s> <s>", "x" * 300, "12345 + 67890 = ?", "Tabs\tand\r\nCRLF",
]


def bodies():
    out = []
    n = 0
    for i, t in enumerate(TEXTS):
        out.append(("user-%d" % i, {"messages": [{"role": "user", "content": t or "hi"}]}))
    for i, t in enumerate(TEXTS):
        out.append(("system-%d" % i, {"messages": [{"role": "system", "content": t or "Be brief."},
                                                   {"role": "user", "content": TEXTS[(i + 1) % len(TEXTS)] or "ok"}]}))
    for i, t in enumerate(TEXTS):
        a = TEXTS[(i + 3) % len(TEXTS)] or "Sure."
        out.append(("multiturn-%d" % i, {"messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": t or "hello"},
            {"role": "assistant", "content": a},
            {"role": "user", "content": TEXTS[(i + 5) % len(TEXTS)] or "more"}]}))
    for i, t in enumerate(TEXTS):
        out.append(("tools-%d" % i, {"tools": TOOLS[: 1 + i % 2], "messages": [
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": t or "weather?"}]}))
    for i, t in enumerate(TEXTS):
        args = json.dumps({"city": t[:20] or "Paris"}, ensure_ascii=(i % 2 == 0))
        out.append(("toolcall-%d" % i, {"tools": TOOLS, "messages": [
            {"role": "system", "content": "Use tools."} if i % 3 else {"role": "user", "content": "hey"},
            {"role": "user", "content": "weather in " + (t or "Paris")},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "abcDEF%03d" % i, "type": "function", "function": {"name": "get_weather", "arguments": args}}]},
            {"role": "tool", "tool_call_id": "abcDEF%03d" % i, "content": (t or "sunny") if i % 2 else '{"temp": 21, "unit": "°C"}'}]}))
    for i, t in enumerate(TEXTS):
        out.append(("twocalls-%d" % i, {"tools": TOOLS, "messages": [
            {"role": "user", "content": "two things: " + (t or "x")},
            {"role": "assistant", "tool_calls": [
                {"id": "call00001", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}},
                {"id": "call00002", "type": "function", "function": {"name": "lookup_unicode", "arguments": '{"q": "%s"}' % ("ß" * (i + 1))}}]},
            {"role": "tool", "tool_call_id": "call00001", "content": "cold"},
            {"role": "tool", "tool_call_id": "call00002", "content": "[1, 2, {\"a\":null}]"},
            {"role": "assistant", "content": "Oslo is cold."},
            {"role": "user", "content": "thanks " + (t or "")}]}))
    for i, t in enumerate(TEXTS):
        out.append(("parts-%d" % i, {"messages": [
            {"role": "system", "content": [{"type": "text", "text": "sys " + t}]},
            {"role": "user", "content": [{"type": "text", "text": t or "a"}, {"type": "text", "text": "b"}]}]}))
    for i, t in enumerate(TEXTS):
        out.append(("long-%d" % i, {"messages": [
            m for k in range(4) for m in (
                {"role": "user", "content": "turn %d: %s" % (k, t)},
                {"role": "assistant", "content": "reply %d %s" % (k, TEXTS[(i + k) % len(TEXTS)] or "ok")})
        ] + [{"role": "user", "content": "end"}]}))
    for i, t in enumerate(TEXTS):
        out.append(("sysmid-%d" % i, {"messages": [
            {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
            {"role": "system", "content": "late system " + t}, {"role": "user", "content": t or "c"}]}))
    for i, t in enumerate(TEXTS):
        out.append(("toolsys-%d" % i, {"tools": TOOLS[1:], "messages": [
            {"role": "system", "content": "S1 " + t}, {"role": "system", "content": "S2"},
            {"role": "user", "content": "q " + t}]}))
    for i, t in enumerate(TEXTS):
        out.append(("consecutive-%d" % i, {"messages": [
            {"role": "user", "content": "u1 " + t}, {"role": "user", "content": "u2"},
            {"role": "assistant", "content": "a1"}, {"role": "assistant", "content": "a2 " + t + " "},
            {"role": "user", "content": "u3"}]}))
    for i, t in enumerate(TEXTS):
        cid = "call_" + "Zq%07d" % i + "xyz"  # vLLM keeps the last 9 characters
        out.append(("toolresult-%d" % i, {"tools": TOOLS[:1], "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "get_weather", "arguments": ""}}]},
            {"role": "tool", "tool_call_id": cid, "content": '{ "k" :  [1,2], "t": %s }' % json.dumps(t)}]}))
    return out


def tokenizer(path, version):
    """vLLM's MistralTokenizer of a model folder holding only path's
    tekken.json, its config.version set to version."""
    with open(path) as f:
        data = json.load(f)
    data["config"]["version"] = version
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "tekken.json"), "w") as f:
        json.dump(data, f)
    return MistralTokenizer.from_pretrained(folder)


def sp_tokenizer(file):
    """vLLM's MistralTokenizer of a model folder holding only one of
    mistral-common's SentencePiece models, as tokenizer.model.vN."""
    folder = tempfile.mkdtemp()
    version = file.rsplit(".model.", 1)[1]
    shutil.copy(os.path.join(DATA, file), os.path.join(folder, "tokenizer.model." + version))
    return MistralTokenizer.from_pretrained(folder), version


SP_FILES = ("mistral_instruct_tokenizer_240323.model.v3", "mistral_instruct_tokenizer_241114.model.v7",
            "mistral_instruct_tokenizer_240216.model.v2", "tokenizer.model.v1")


def main_sp(out):
    """The SentencePiece expectations (mistral-ref.py --sentencepiece OUT)."""
    cases = bodies()
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps({"vllm": pkg_version("vllm"), "transformers": pkg_version("transformers"),
                            "mistral_common": mistral_common.__version__, "sentencepiece": pkg_version("sentencepiece"),
                            "note": "mistral-ref.py --sentencepiece: vLLM MistralTokenizer.apply_chat_template"}) + "\n")
        for file in SP_FILES:
            tok, version = sp_tokenizer(file)
            n = 0
            for name, body in cases:
                rec = {"sentencepiece": file, "version": version, "name": name, "body": body}
                try:
                    ids = encode(tok, body)
                except Exception as e:  # a request mistral-common refuses
                    rec["error"] = type(e).__name__ + ": " + str(e)[:200]
                else:
                    rec["count"], rec["ids"] = len(ids), ids
                    n += 1
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            print(file, version, n, "bodies", file=sys.stderr)


def encode(tok, body):
    messages = copy.deepcopy(body["messages"])
    truncate_tool_call_ids(types.SimpleNamespace(messages=messages))
    return tok.apply_chat_template(messages, tools=body.get("tools"), add_generation_prompt=True)


def main():
    out = sys.argv[1]
    cases = bodies()
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps({"vllm": pkg_version("vllm"), "transformers": pkg_version("transformers"),
                            "mistral_common": mistral_common.__version__,
                            "note": "mistral-ref.py: vLLM MistralTokenizer.apply_chat_template"}) + "\n")
        for file, version in (("tekken_240718", "v3"), ("tekken_240911", "v3"), ("tekken_240911", "v7")):
            tok = tokenizer(os.path.join(DATA, file + ".json"), version)
            n = 0
            for name, body in cases:
                try:
                    ids = encode(tok, body)
                except Exception as e:  # a request mistral-common refuses
                    f.write(json.dumps({"tekken": file, "version": version, "name": name, "body": body,
                                        "error": type(e).__name__ + ": " + str(e)[:200]}, ensure_ascii=False) + "\n")
                    continue
                n += 1
                f.write(json.dumps({"tekken": file, "version": version, "name": name, "body": body,
                                    "count": len(ids), "ids": ids}, ensure_ascii=False) + "\n")
            print(file, version, n, "bodies", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "--sentencepiece":
        main_sp(sys.argv[2])
    else:
        main()
