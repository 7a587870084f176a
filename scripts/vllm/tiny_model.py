"""Writes a tiny random-weight model around a reference tokenizer folder.

    tiny_model.py TOKENIZER_DIR OUT_DIR [MODEL_TYPE]

The server's prompt count depends only on the tokenizer and the chat
template, so the model is the smallest one vLLM's CPU backend serves: a
two-layer Llama (head size 64, which its attention kernels support) whose
vocabulary covers every id of the tokenizer. Nothing is downloaded: the
weights are drawn at random with a fixed seed and written with
transformers' save_pretrained; the tokenizer files are copied as they are.

MODEL_TYPE, when given, is the real model's model_type, and OUT_DIR/tokenizer
gets the tokenizer files with a config.json of that model_type (the server
is then started with --tokenizer OUT_DIR/tokenizer): transformers picks the
tokenizer class from it. DeepSeek-V3's tokenizer_config.json names
LlamaTokenizerFast, which in transformers 5 replaces the tokenizer.json's
ByteLevel pre-tokenizer with Metaspace (huggingface/transformers#45488)
unless the model's model_type is deepseek_v3
(MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS), as it is in the real model's
repository. The layers stay Llama's: a tiny DeepseekV3ForCausalLM starts but
its engine fails on the first request on CPU (MLA).
"""
import json
import os
import shutil
import sys

import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

src, out = sys.argv[1], sys.argv[2]
model_type = sys.argv[3] if len(sys.argv) > 3 else None
tok = AutoTokenizer.from_pretrained(src)
os.makedirs(out, exist_ok=True)
for name in os.listdir(src):
    shutil.copy(os.path.join(src, name), os.path.join(out, name))
# Every id the tokenizer can produce, added tokens included, rounded up.
vocab = (max(len(tok), max(tok.get_vocab().values()) + 1) + 63) // 64 * 64
max_len = 65536
config = LlamaConfig(
    vocab_size=vocab,
    hidden_size=128,
    intermediate_size=256,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=2,
    head_dim=64,
    max_position_embeddings=max_len,
    bos_token_id=tok.bos_token_id,
    eos_token_id=tok.eos_token_id,
    tie_word_embeddings=True,
    torch_dtype="bfloat16",
)
torch.manual_seed(0)
model = LlamaForCausalLM(config).to(torch.bfloat16)
model.save_pretrained(out)
# A generation_config.json from the model would set sampling defaults only;
# none is written, so vLLM's own defaults apply.
gen = os.path.join(out, "generation_config.json")
if os.path.exists(gen):
    os.remove(gen)
if model_type:
    tokdir = os.path.join(out, "tokenizer")
    os.makedirs(tokdir, exist_ok=True)
    for name in os.listdir(src):
        shutil.copy(os.path.join(src, name), os.path.join(tokdir, name))
    json.dump({"model_type": model_type}, open(os.path.join(tokdir, "config.json"), "w"))
print(json.dumps({"model": out, "vocab_size": vocab, "tokenizer_len": len(tok)}))
