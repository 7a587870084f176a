#!/usr/bin/env python3
"""Does SGLang prefill a Mistral-format (Tekken) model's chat bodies with the
ids vLLM's mistral renderer does?

Runs every body of internal/serverprofile/testdata/mistral-expect.jsonl.gz
(vLLM 0.32.0's MistralTokenizer, mistral-common 1.13.1) through SGLang's own
code, as installed (sglang 0.5.23 with mistral-common 1.13.1 added): a model
folder holding only the body's tekken.json (config.version set as in
mistral-ref.py), loaded by SGLang's get_tokenizer (a bare Tekken checkpoint:
transformers' MistralCommonTokenizer), and OpenAIServingChat._process_messages
with the serving object's own probe of the prompt's text round trip (lossy
for mistral-common: the ids then come from the tokenizer's
apply_chat_template(tokenize=True)). The content format is "string", what
SGLang's TemplateManager falls back to without a Jinja template.

Prints one line per tokenizer and a summary: bodies with identical ids,
different ids, and errors on either side. Evidence only; nothing is written.

Usage: mistral-sglang-check.py [EXPECT.jsonl.gz]
"""
import copy, gzip, json, os, sys, tempfile
from collections import Counter

import mistral_common
import sglang
from sglang.srt.entrypoints.openai import serving_chat
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
from sglang.srt.utils.hf_transformers.tokenizer import get_tokenizer

EXPECT = sys.argv[1] if len(sys.argv) > 1 else "internal/serverprofile/testdata/mistral-expect.jsonl.gz"
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
    chat._template_reads_reasoning_content = False
    chat._chat_template_cache = __import__("collections").OrderedDict()
    return chat


servers = {}
stats = Counter()
per = Counter()
examples = []
with gzip.open(EXPECT, "rt", encoding="utf-8") as f:
    next(f)
    for line in f:
        c = json.loads(line)
        key = (c["tekken"], c["version"])
        if key not in servers:
            servers[key] = server(*key)
            print(key, "round trip lossy:", servers[key]._prompt_text_round_trip_is_lossy, type(servers[key].tokenizer_manager.tokenizer).__name__, file=sys.stderr)
        try:
            body = dict(copy.deepcopy(c["body"]), model="m")
            res = servers[key]._process_messages(ChatCompletionRequest.model_validate(body), False)
            ids, err = list(res.prompt_ids), None
        except Exception as e:
            ids, err = None, f"{type(e).__name__}: {e}"[:200]
        ref_err = "error" in c
        if err and ref_err:
            out = "both refuse"
        elif err:
            out = "sglang refuses, vllm renders"
        elif ref_err:
            out = "vllm refuses, sglang renders"
        elif ids == c["ids"]:
            out = "identical"
        else:
            out = "ids differ"
        stats[out] += 1
        per[(key, out)] += 1
        if out not in ("identical", "both refuse") and len(examples) < 12:
            examples.append((key, c["name"], out, err, None if ids is None else len(ids), c.get("count")))

print(json.dumps({"sglang": sglang.__version__, "mistral_common": mistral_common.__version__, "summary": dict(stats),
                  "per_tokenizer": {f"{k[0][0]} {k[0][1]}: {k[1]}": n for k, n in sorted(per.items())}}, indent=1))
for e in examples:
    print(e)
