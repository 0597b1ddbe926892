"""A hand-written stdio MCP server with the faults ``mcpline doctor`` must flag.

``python tests/servers/broken_server.py [--banner] [--ignore-malformed] [--linger]``:
``--banner`` prints a greeting on stdout first; ``--ignore-malformed`` never answers a line
that is not JSON; ``--linger`` keeps running 30 s after its input ends.
"""

import json
import sys
import time

flags = set(sys.argv[1:])
if "--banner" in flags:
    print("Server starting... ready!", flush=True)


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        if "--ignore-malformed" not in flags:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})
        continue
    if "id" not in request:
        continue
    method, rid = request.get("method"), request["id"]
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "broken", "version": "0"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {
            "tools": [
                {
                    "name": "echo",
                    "description": "Echo.",
                    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
                }
            ]
        }
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method"}})
        continue
    send({"jsonrpc": "2.0", "id": rid, "result": result})

if "--linger" in flags:
    time.sleep(30)
