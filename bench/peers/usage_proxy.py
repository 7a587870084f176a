"""A loopback proxy that records what the server counted for every request.

    usage_proxy.py PORT UPSTREAM LOG.jsonl

Each client under test talks to the server through it, so every tool is
judged by the same figure: the server's own usage (prompt_tokens,
completion_tokens) of each request, whatever the tool itself reports. A
streamed request that does not ask for usage gets
stream_options.include_usage (the server then adds one last chunk with
empty choices, which OpenAI clients skip); nothing else is changed. One
line per request: path, the requested output length and ignore_eos, the
last chat message's text, the server's status and usage, and the
request's arrival time (t, seconds since the epoch, taken before its body
is read: rate.py judges each client's schedule by it).
"""
import json
import sys
import time

from aiohttp import ClientSession, ClientTimeout, web

port, upstream, log_path = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3]
log = open(log_path, "a", buffering=1)


def usage_of(raw, streamed):
    if not streamed:
        try:
            return json.loads(raw).get("usage")
        except ValueError:
            return None
    usage = None
    for line in raw.split(b"\n"):
        if line.startswith(b"data: {"):
            try:
                u = json.loads(line[6:]).get("usage")
            except ValueError:
                continue
            if u:
                usage = u
    return usage


async def handle(request):
    t = time.time()
    body = await request.read()
    rec = {"path": request.path, "t": t}
    data = None
    if body:
        try:
            data = json.loads(body)
        except ValueError:
            pass
    streamed = False
    if isinstance(data, dict):
        rec["max_tokens"] = data.get("max_completion_tokens") or data.get("max_tokens") or data.get("max_output_tokens")
        rec["ignore_eos"] = data.get("ignore_eos")
        msgs = data.get("messages")
        if isinstance(msgs, list) and msgs and isinstance(msgs[-1], dict):
            c = msgs[-1].get("content")
            if isinstance(c, list):  # vllm bench's openai-chat sends [{"type": "text", "text": ...}]
                c = "".join(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text")
            if isinstance(c, str):
                rec["last_text"] = c  # a dataset request's target is its text's count
        streamed = bool(data.get("stream"))
        if streamed and "/responses" not in request.path:
            so = data.get("stream_options") or {}
            if not so.get("include_usage"):
                data["stream_options"] = dict(so, include_usage=True)
                rec["usage_injected"] = True
                body = json.dumps(data).encode()
    headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "authorization", "accept")}
    buf, status, resp = bytearray(), None, None
    try:
        async with request.app["session"].request(request.method, upstream + request.path_qs, data=body, headers=headers) as r:
            status = r.status
            resp = web.StreamResponse(status=r.status)
            resp.content_type = r.content_type
            await resp.prepare(request)
            async for chunk in r.content.iter_any():
                buf += chunk
                await resp.write(chunk)
            # A client may close as soon as it has read [DONE] (GuideLLM
            # does), before the last chunk's terminator: the request was
            # still served and is still logged.
            await resp.write_eof()
    except ConnectionError:
        if resp is None:
            raise
    finally:
        if request.method == "POST":
            rec["status"] = status
            u = usage_of(bytes(buf), streamed) or {}
            rec["prompt_tokens"] = u.get("prompt_tokens", u.get("input_tokens"))
            rec["completion_tokens"] = u.get("completion_tokens", u.get("output_tokens"))
            log.write(json.dumps(rec) + "\n")
    return resp


async def start(app):
    app["session"] = ClientSession(timeout=ClientTimeout(total=600))


async def stop(app):
    await app["session"].close()


app = web.Application(client_max_size=256 << 20)
app.on_startup.append(start)
app.on_cleanup.append(stop)
app.router.add_route("*", "/{tail:.*}", handle)
web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)
