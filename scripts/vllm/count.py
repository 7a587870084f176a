"""Sends request bodies to a vLLM server and writes the server's own count.

    count.py URL < cases.jsonl > counted.jsonl

Each input line is {"model", "source", "case", "body"} (model names the
reference model folder the server serves; the body is an OpenAI chat,
completions or Responses body as islkit sends or measures it). The body
goes to the endpoint its shape names (messages: /v1/chat/completions,
prompt: /v1/completions, input: /v1/responses) with only what bounds the
work changed: one output token, no streaming, and for chat and completions
vLLM's return_token_ids so the prompt's ids come back too. The prompt is
not touched, so the count is what the body as written costs.

Each output line is the input line plus either "prompt_tokens" (the
server's usage.prompt_tokens, input_tokens for Responses) and, for prompts
of at most IDS_MAX tokens, "ids", or "status" and "error" when the server
refused the body.
"""
import json
import sys
import urllib.error
import urllib.request

IDS_MAX = 1100


def endpoint(body):
    if "messages" in body:
        return "chat"
    if "prompt" in body:
        return "completions"
    if "input" in body or "instructions" in body:
        return "responses"
    raise SystemExit("count.py: a body with neither messages, prompt nor input: %s" % json.dumps(body)[:200])


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def main():
    base = sys.argv[1].rstrip("/")
    for line in sys.stdin:
        rec = json.loads(line)
        body = dict(rec["body"])
        kind = endpoint(body)
        body["model"] = "m"
        body.pop("stream_options", None)
        body["stream"] = False
        for k in ("max_tokens", "max_completion_tokens", "max_output_tokens", "min_tokens"):
            body.pop(k, None)
        if kind == "responses":
            body["max_output_tokens"] = 1
        else:
            body["max_tokens"] = 1
            body["return_token_ids"] = True
        path = {"chat": "/v1/chat/completions", "completions": "/v1/completions", "responses": "/v1/responses"}[kind]
        status, got = post(base + path, body)
        rec["endpoint"] = kind
        if status != 200:
            rec["status"] = status
            err = got.get("error", got)
            rec["error"] = err.get("message", json.dumps(err)) if isinstance(err, dict) else str(err)
        else:
            usage = got.get("usage") or {}
            rec["prompt_tokens"] = usage["input_tokens"] if kind == "responses" else usage["prompt_tokens"]
            ids = got.get("prompt_token_ids")
            if ids is None and got.get("choices"):
                ids = got["choices"][0].get("prompt_token_ids")
            if ids is not None and len(ids) <= IDS_MAX:
                rec["ids"] = ids
        print(json.dumps(rec, ensure_ascii=False), flush=True)


main()
