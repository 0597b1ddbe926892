"""The baseline: a minimal MCP tools server in plain stdlib Python (no validation, no capture)."""

import json
import sys


def add(a, b):
    return a + b


def shout(text):
    for i in range(10):
        print(f"shout {i}: {text}", file=sys.stderr)
    return text


FUNCTIONS = {"add": add, "shout": shout}
TOOLS = [{"name": "add", "description": "Add two integers.", "inputSchema": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"]}}, {"name": "shout", "description": "Write ten lines to stderr.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"]}}]


def handle(msg):
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        return None
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "loop", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        args = msg["params"].get("arguments") or {}
        value = FUNCTIONS[msg["params"]["name"]](**args)
        result = {"content": [{"type": "text", "text": str(value)}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "not found"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


out = sys.stdout
for line in sys.stdin:
    reply = handle(json.loads(line))
    if reply is not None:
        out.write(json.dumps(reply) + "\n")
        out.flush()
