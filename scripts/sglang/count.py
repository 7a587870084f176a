"""SGLang's own chat preprocessing, run on CPU without a server.

    count.py MODEL_DIR NAME < cases.jsonl > counted.jsonl

SGLang's server cannot start here (its package needs CUDA kernels), but its
OpenAI chat handler can be built around a stand-in tokenizer manager: the
real OpenAIServingChat and TemplateManager (template choice, content-format
detection, message processing, continue_final_message, tools, encoding)
run on the real tokenizer, so the prompt ids are SGLang's own. What is not
SGLang's: the tokenizer manager (model config and server flags are
defaults). Each case {"model", "source", "case", "body"} with a chat body
gets "prompt_tokens" and, for at most IDS_MAX tokens, "ids"; or "error"
(SGLang's validation or a template that raises). Completions and Responses
bodies are not handled (they go through the tokenizer manager).
"""
import json
import logging
import os
import sys
from unittest.mock import MagicMock

logging.disable(logging.WARNING)

from transformers import AutoConfig, AutoTokenizer  # noqa: E402

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest  # noqa: E402
from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat  # noqa: E402
from sglang.srt.parser.template_manager import TemplateManager  # noqa: E402
from sglang.srt.runtime_context import get_context  # noqa: E402
from sglang.srt.server_args import ServerArgs  # noqa: E402

IDS_MAX = 1100
model_dir, name = sys.argv[1], sys.argv[2]
# Where the tiny model keeps the real model_type apart (deepseek_v3:
# scripts/vllm/tiny_model.py), the tokenizer and the config come from there.
if os.path.isdir(os.path.join(model_dir, "tokenizer")):
    model_dir = os.path.join(model_dir, "tokenizer")
tm = MagicMock()
tm.tokenizer = AutoTokenizer.from_pretrained(model_dir)
tm.model_config.hf_config = AutoConfig.from_pretrained(model_dir)
tm.model_config.is_multimodal = False
tm.model_config.get_default_sampling_params.return_value = {}
tm.served_model_name = "m"
tm.processor = None  # a text-only model has no multimodal processor
tm.config_value.return_value = None
# The server flags SGLang publishes at startup, at their defaults (as
# `sglang serve --model-path DIR --device cpu` would set them).
get_context().set_server_args(ServerArgs(model_path=model_dir, device="cpu"))
templates = TemplateManager()
# The model path is the reference model's name, as a server started on a
# folder of that name would see it (SGLang guesses built-in templates from it).
templates.initialize_templates(tm, model_path=name)
serving = OpenAIServingChat(tm, templates)
print(json.dumps({"kind": "sglang-setup", "chat_template_name": templates.chat_template_name,
                  "content_format": templates.jinja_template_content_format}), file=sys.stderr)

for line in sys.stdin:
    rec = json.loads(line)
    body = rec["body"]
    if "messages" not in body:
        continue
    try:
        req = ChatCompletionRequest(**body)
        err = serving._validate_request(req)
        if err:
            raise ValueError(err)
        res = serving._process_messages(req, is_multimodal=False)
        ids = res.prompt_ids
        if isinstance(ids, str):
            ids = tm.tokenizer.encode(ids)
        rec["prompt_tokens"] = len(ids)
        if len(ids) <= IDS_MAX:
            rec["ids"] = list(ids)
    except Exception as e:  # SGLang's refusal or a template error
        rec["status"] = 400  # what the server answers a request it refuses
        rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
    print(json.dumps(rec, ensure_ascii=False), flush=True)
