# uvicorn-chat.py PORT — an OpenAI-like /v1/chat/completions on uvicorn +
# starlette (vLLM's and SGLang's HTTP stack: h11, SSE through
# StreamingResponse, JSON otherwise, keep-alive timeout 5 s), for
# scripts/check-client-uvicorn.sh. GET /conns says how many client
# connections (ports) it has seen. Not islkit's test server: no token
# accounting, only the HTTP behaviour send meets in production.
import asyncio, json, sys
from starlette.applications import Starlette
from starlette.responses import StreamingResponse, JSONResponse
from starlette.routing import Route

ports = set()

async def chat(request):
    ports.add(request.client.port)
    body = await request.json()
    n = int(body.get("max_tokens") or 4)
    words = ["w%d " % i for i in range(n)]
    usage = {"prompt_tokens": 7, "completion_tokens": n, "total_tokens": 7 + n}
    if body.get("stream"):
        async def gen():
            for w in words:
                yield "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]}) + "\n\n"
                await asyncio.sleep(0.001)
            yield "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}], "usage": usage}) + "\n\n"
            yield "data: [DONE]\n\n"
        return StreamingResponse(gen(), media_type="text/event-stream")
    return JSONResponse({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(words)}, "finish_reason": "length"}], "usage": usage})

async def conns(request):
    return JSONResponse({"ports": len(ports)})

app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/conns", conns)])

if __name__ == "__main__":
    import uvicorn
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", http="h11")
