"""The ceiling of a Python server under uvicorn: a bare ASGI app that answers every POST with
`add`'s result (`json.loads` of the body for its id, `json.dumps` of the answer), with no MCP
checks at all. Not an MCP server; it shows what uvicorn itself costs per request.

    python bench/peers/asgi_fixed.py PORT [--http h11|httptools] [--loop asyncio|uvloop]
"""

import json

from uvicorn_peer import serve

HEADERS = [(b"content-type", b"application/json")]


async def app(scope, receive, send):
    if scope["type"] != "http":
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    request = json.loads(b"".join(chunks))
    args = request["params"]["arguments"]
    reply = {
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {
            "content": [{"type": "text", "text": str(args["a"] + args["b"])}],
            "structuredContent": {"result": args["a"] + args["b"]},
            "isError": False,
        },
    }
    body = json.dumps(reply, separators=(",", ":")).encode()
    headers = [*HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    serve(app)
