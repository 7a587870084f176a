#!/usr/bin/env python3
"""osl-reference-server.py: an independent OpenAI-compatible chat server
for checking send --exact-osl and measure's output-length section
(scripts/check-osl-reference.sh). Not the project's test server: written
from the servers' documented request parameters, standard library HTTP,
the real HuggingFace `tokenizers` from PyPI for its output tokens.

Its "model" emits token ids of the given tokenizer.json drawn from a
generator seeded by the request body, and ends the reply at EOS at a
length drawn from 1..max_tokens, unless the request says otherwise in the
named server's parameters:

  --server vllm    ignore_eos, min_tokens (vLLM's OpenAI protocol:
                   ChatCompletionRequest's sampling extras)
  --server sglang  ignore_eos, min_tokens (SGLang's OpenAI protocol,
                   passed to its sampler as ignore_eos and min_new_tokens)

A parameter not given is not applied. --ignore-min-tokens makes it ignore
both (a server that silently drops them). The reply streams each token's
text as decoded by `tokenizers` (chat.completion.chunk), then a usage chunk
with completion_tokens (the ids generated) when stream_options asks, then
[DONE]. Every reply's length and why it stopped is appended to --log as
JSON: {"key", "tokens", "finish_reason", "why"} with why one of
max_tokens, eos, ignored_min_tokens; key is body_key(request), the SHA-256
of the parsed body written canonically, which a checker computes from the
payload a record holds.

Listens on 127.0.0.1 only; prints "listening on http://127.0.0.1:PORT".
"""

import argparse
import hashlib
import json
import random
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tokenizers import Tokenizer


def body_key(req):
    """The SHA-256 of a parsed request body, written canonically."""
    canon = json.dumps(req, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json")
    ap.add_argument("--server", choices=["vllm", "sglang"], default="vllm")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", required=True)
    ap.add_argument("--ignore-min-tokens", action="store_true")
    args = ap.parse_args()

    tok = Tokenizer.from_file(args.tokenizer)
    # Plain lower-case word pieces with a leading space, so that every
    # token decodes to text of its own (no byte fragments, no specials).
    vocab = sorted(
        i for t, i in tok.get_vocab(with_added_tokens=False).items()
        if t.startswith("Ġ") and t[1:].isalpha() and t[1:].islower() and 2 <= len(t) <= 8
    )
    if not vocab:
        sys.exit("no word tokens in " + args.tokenizer)
    lock = threading.Lock()

    def length_of(req, body):
        limit = req.get("max_completion_tokens") or req.get("max_tokens") or 16
        ignore_eos = bool(req.get("ignore_eos", False))
        min_tokens = int(req.get("min_tokens") or 0)
        asked = ignore_eos or min_tokens > 0
        why_early = "eos"
        if args.ignore_min_tokens:
            ignore_eos, min_tokens = False, 0
            if asked:
                why_early = "ignored_min_tokens"
        rng = random.Random(f"{args.seed}:{hashlib.sha256(body).hexdigest()}")
        if not ignore_eos:
            stop = max(rng.randint(1, limit), min_tokens)
            if stop < limit:
                return stop, "stop", why_early, rng
        return limit, "length", "max_tokens", rng

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/chat/completions":
                return self.reply(404, {"error": {"message": "no route " + self.path}})
            try:
                req = json.loads(body)
            except ValueError as e:
                return self.reply(400, {"error": {"message": str(e)}})
            n, finish, why, rng = length_of(req, body)
            ids = [rng.choice(vocab) for _ in range(n)]
            with lock, open(args.log, "a") as f:
                f.write(json.dumps({"key": body_key(req), "tokens": n,
                                    "finish_reason": finish, "why": why}) + "\n")
            model = req.get("model", "m")
            usage = {"completion_tokens": n}
            if not req.get("stream"):
                text = tok.decode(ids)
                return self.reply(200, {"id": "ref", "object": "chat.completion", "model": model,
                                        "choices": [{"index": 0, "finish_reason": finish,
                                                     "message": {"role": "assistant", "content": text}}],
                                        "usage": usage})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def event(obj):
                data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

            def chunk(delta, fin=None):
                event({"id": "ref", "object": "chat.completion.chunk", "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]})

            chunk({"role": "assistant", "content": ""})
            prev = ""
            for k in range(n):
                # Each token's text is what decoding the ids so far adds,
                # as a detokenizing server streams it.
                text = tok.decode(ids[: k + 1])
                chunk({"content": text[len(prev):]})
                prev = text
            chunk({}, finish)
            if (req.get("stream_options") or {}).get("include_usage"):
                event({"id": "ref", "object": "chat.completion.chunk", "model": model, "choices": [], "usage": usage})
            event("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def reply(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on http://127.0.0.1:{srv.server_address[1]}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
