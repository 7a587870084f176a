#!/usr/bin/env python3
"""Reference prompts of DeepSeek-V3.2 chat requests as SGLang renders them.

Writes internal/serverprofile/testdata/deepseek-v32-sglang-expect.jsonl.gz: a
first line recording the sources and versions, then one line per chat body
with the prompt text, its token ids and their count, or the error SGLang
raises on it.

Nothing is transcribed: the bodies go through SGLang's own code, as installed
(pip install -r scripts/renderers/requirements-sglang.txt): the request is
validated by its ChatCompletionRequest, and OpenAIServingChat's
_process_messages (which picks the tools by tool_choice) calls
_apply_jinja_template, which renders it with chat_encoding_spec "dsv32" (what
chat_encoding.resolve_chat_encoding_spec picks for a DeepseekV3* architecture
without a chat template, DeepSeek-V3.2's case), which runs SGLang's
encoding_dsv32.encode_messages and encodes the text with the tokenizer SGLang's
get_tokenizer loads. The serving object is built without a server
(object.__new__); only what that branch reads is set.

The corpus is the bodies of the vLLM expectations
(deepseek-v32-expect.jsonl.gz) plus bodies where SGLang differs (a final
assistant message, continue_final_message, "reasoning" against
"reasoning_content", arguments that are not JSON objects, tool_choice,
the tools' fields, role case).

The model folder is the V3.2 stand-in (deepseek-v32-ref.py --model-dir): the
deepseek_v3 conformance tokenizer with <think> and </think> at 128798/128799;
its chat template is removed here, as DeepSeek-V3.2 ships none.

Usage: deepseek-v32-sglang-ref.py MODEL_DIR VLLM_EXPECT.jsonl.gz OUT.jsonl.gz
"""
import copy, gzip, json, os, shutil, sys, tempfile

import sglang
from sglang.srt.entrypoints.openai import serving_chat
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
from sglang.srt.utils.hf_transformers.tokenizer import get_tokenizer
import tokenizers, transformers

model_dir, vllm_expect, out_path = sys.argv[1:4]

tmp = tempfile.mkdtemp()
for name in ("tokenizer.json", "config.json"):
    shutil.copy(os.path.join(model_dir, name), tmp)
cfg = json.load(open(os.path.join(model_dir, "tokenizer_config.json"), encoding="utf-8"))
cfg.pop("chat_template", None)
json.dump(cfg, open(os.path.join(tmp, "tokenizer_config.json"), "w", encoding="utf-8"), ensure_ascii=False)
TOK = get_tokenizer(tmp)


class _TemplateManager:
    jinja_template_content_format = "string"
    reasoning_config = None
    jinja_template_may_reorder_tool_results = False


class _TokenizerManager:
    tokenizer = TOK


chat = object.__new__(serving_chat.OpenAIServingChat)
chat.tokenizer_manager = _TokenizerManager()
chat.template_manager = _TemplateManager()
chat.chat_encoding_spec = "dsv32"
chat._encoding_adapter = None
chat.is_gpt_oss = False
chat.is_gemma4 = False
chat.is_minimax_m3 = False
chat.reasoning_parser = None
chat.tool_call_parser = None
chat._reasoning_detector = None


chat.default_chat_template_kwargs = None
chat.template_manager.chat_template_name = None


def render(body):
    req = ChatCompletionRequest.model_validate(body)
    # _process_messages: tool_choice, the tools handed on, then
    # _apply_jinja_template.
    res = chat._process_messages(req, False)
    return list(res.prompt_ids)


def extra_bodies():
    m = "deepseek-v3.2"
    yield "final-assistant", {"model": m, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How"}]}
    yield "final-assistant-thinking", {"model": m, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}], "chat_template_kwargs": {"thinking": True}}
    yield "continue-final", {"model": m, "messages": [{"role": "user", "content": "Count to 3"}, {"role": "assistant", "content": "1, 2,"}], "continue_final_message": True}
    yield "reasoning-key", {"model": m, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning": "why"}, {"role": "user", "content": "c"}]}
    yield "reasoning-key-thinking-tool", {"model": m, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "", "reasoning": "why", "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]}, {"role": "tool", "tool_call_id": "c0", "content": "ok"}], "chat_template_kwargs": {"thinking": True}}
    yield "args-list", {"model": m, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "[1]"}}]}, {"role": "tool", "tool_call_id": "c0", "content": "ok"}]}
    yield "args-invalid", {"model": m, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{x"}}]}, {"role": "tool", "tool_call_id": "c0", "content": "ok"}]}
    yield "system-with-tools", {"model": m, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "weather?"}], "tools": [{"type": "function", "function": {"name": "ping"}}]}
    ping = {"type": "function", "function": {"name": "ping"}}
    fancy = {"type": "function", "function": {"strict": False, "parameters": {"type": "object"}, "x-extra": 1, "name": "fancy", "description": "d"}}
    ask = [{"role": "user", "content": "go"}]
    yield "tool-choice-none", {"model": m, "messages": ask, "tools": [ping], "tool_choice": "none"}
    yield "tool-choice-auto", {"model": m, "messages": ask, "tools": [ping], "tool_choice": "auto"}
    yield "tool-choice-required", {"model": m, "messages": ask, "tools": [ping, fancy], "tool_choice": "required"}
    yield "tool-choice-named", {"model": m, "messages": ask, "tools": [ping, fancy], "tool_choice": {"type": "function", "function": {"name": "fancy"}}}
    yield "tool-choice-named-missing", {"model": m, "messages": ask, "tools": [ping], "tool_choice": {"type": "function", "function": {"name": "nope"}}}
    yield "tool-fields-order", {"model": m, "messages": ask, "tools": [fancy, {"type": "function", "function": {"description": None, "name": "n", "strict": None}}]}
    yield "role-upper", {"model": m, "messages": [{"role": "System", "content": "S"}, {"role": "user", "content": "u"}, {"role": "ASSISTANT", "content": "a"}, {"role": "user", "content": "v"}]}
    yield "role-user-upper", {"model": m, "messages": [{"role": "User", "content": "u"}]}
    yield "enable-thinking-only", {"model": m, "messages": ask, "chat_template_kwargs": {"enable_thinking": True}}
    # ChatCompletionRequest's normalize_reasoning_inputs: an effort defaults
    # chat_template_kwargs thinking (false for "none"); the request's own win.
    yield "reasoning-effort-high", {"model": m, "messages": ask, "reasoning_effort": "high"}
    yield "reasoning-effort-none", {"model": m, "messages": ask, "reasoning_effort": "none"}
    yield "reasoning-effort-none-kwargs-thinking", {"model": m, "messages": ask, "reasoning_effort": "none", "chat_template_kwargs": {"thinking": True}}
    yield "reasoning-effort-low-kwargs-no-thinking", {"model": m, "messages": ask, "reasoning_effort": "low", "chat_template_kwargs": {"thinking": False}}
    # ... and a "reasoning" object: its effort replaces the top-level one, its
    # enabled turns thinking on unless the effort is "none".
    yield "reasoning-object-effort-none", {"model": m, "messages": ask, "reasoning": {"effort": "none"}}
    yield "reasoning-object-enabled", {"model": m, "messages": ask, "reasoning": {"enabled": True}}
    yield "reasoning-object-enable-string", {"model": m, "messages": ask, "reasoning": {"enable": "Yes"}}
    yield "reasoning-object-enabled-effort-none", {"model": m, "messages": ask, "reasoning": {"enabled": True, "effort": "none"}}
    yield "reasoning-object-overrides-top-level", {"model": m, "messages": ask, "reasoning_effort": "none", "reasoning": {"effort": "high"}}
    yield "reasoning-object-numeric-effort", {"model": m, "messages": ask, "reasoning": {"reasoning_effort": 0.5}}
    yield "reasoning-object-numeric-string", {"model": m, "messages": ask, "reasoning": {"effort": "0.25"}}
    yield "reasoning-object-invalid-effort", {"model": m, "messages": ask, "reasoning": {"effort": "bogus"}}
    yield "reasoning-object-disabled", {"model": m, "messages": ask, "reasoning": {"enabled": False}}
    yield "thinking-dropped-before-tool", {"model": m, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"}, {"role": "user", "content": "c"}, {"role": "assistant", "content": "", "reasoning_content": "r2", "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c0", "content": "ok"}], "chat_template_kwargs": {"thinking": True}}
    yield "final-assistant-tool-calls", {"model": m, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{\"k\": [1, 2]}"}}]}]}
    yield "tool-parts", {"model": m, "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}, {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c0", "content": [{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}]}]}


def corpus():
    with gzip.open(vllm_expect, "rt", encoding="utf-8") as f:
        next(f)
        for line in f:
            c = json.loads(line)
            yield c["name"], c["body"]
    yield from extra_bodies()


rows = []
for name, body in corpus():
    row = {"name": name, "body": body}
    try:
        ids = render(copy.deepcopy(body))
        row["text"] = TOK.decode(ids, skip_special_tokens=False)
        row["count"] = len(ids)
        row["ids"] = ids
    except Exception as e:  # what SGLang answers with a 400
        row["error"] = f"{type(e).__name__}: {e}"[:300]
    rows.append(row)

header = {"sglang": sglang.__version__, "transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
          "python": sys.version.split()[0], "path": "OpenAIServingChat._process_messages, chat_encoding_spec dsv32",
          "tokenizer": "deepseek_v3 conformance tokenizer.json, ids 128798/128799 renamed <think>/</think>, no chat template"}
with gzip.GzipFile(out_path, "wb", mtime=0) as f:
    f.write((json.dumps(header, ensure_ascii=False) + "\n").encode())
    for row in rows:
        f.write((json.dumps(row, ensure_ascii=False) + "\n").encode())
print(f"{sum('error' not in r for r in rows)} rendered, {sum('error' in r for r in rows)} errors", file=sys.stderr)
