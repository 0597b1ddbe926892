// Interop: the official TypeScript MCP SDK client drives an mcpline server over stdio.
//
//   node tests/interop/ts_client.mjs <python-executable> <server-script>
//
// Connects (initialize), lists tools, calls add/echo/fail/crash and an unknown tool, pings,
// closes stdin, and prints ONE JSON object on stdout summarising what it observed (asserted on
// by tests/test_interop_typescript_sdk.py). Diagnostics go to stderr. Exits non-zero on any
// exception the script did not expect.

import process from 'node:process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const [python, server] = process.argv.slice(2);
if (!python || !server) {
  console.error('usage: node ts_client.mjs <python-executable> <server-script>');
  process.exit(2);
}

// The transport passes only a few "safe" variables by default; the server must see ours
// (PYTHONPATH, virtualenv) to import the same mcpline.
const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined));
const transport = new StdioClientTransport({ command: python, args: [server], env, stderr: 'inherit' });

// The SDK does not expose the negotiated protocol version on stdio, so record the raw inbound
// messages the transport hands to the client and read it off the initialize response.
const inbound = [];
let handler;
Object.defineProperty(transport, 'onmessage', {
  configurable: true,
  get: () => handler,
  set: (fn) => {
    handler = fn && ((message, extra) => {
      inbound.push(message);
      return fn(message, extra);
    });
  },
});

const client = new Client({ name: 'mcpline-interop-ts', version: '0.0.0' });
const summary = {};

// A JSON-RPC error as the SDK surfaces it; anything else is unexpected and rethrown.
async function expectMcpError(promise) {
  try {
    const result = await promise;
    return { unexpectedResult: result };
  } catch (error) {
    if (error instanceof McpError) {
      return { code: error.code, message: error.message };
    }
    throw error;
  }
}

const timer = setTimeout(() => {
  console.error('ts_client: timed out after 60 s');
  process.exit(3);
}, 60_000);

try {
  await client.connect(transport);
  const initialize = inbound.find((m) => m.result && typeof m.result.protocolVersion === 'string');
  summary.protocolVersion = initialize?.result.protocolVersion ?? null;
  summary.serverVersion = client.getServerVersion() ?? null;
  summary.capabilities = client.getServerCapabilities() ?? null;
  summary.instructions = client.getInstructions() ?? null;

  const listed = await client.listTools();
  summary.tools = listed.tools.map((t) => t.name);
  summary.addTool = listed.tools.find((t) => t.name === 'add') ?? null;

  // callTool validates structuredContent against add's outputSchema (cached by listTools).
  summary.add = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
  summary.echo = await client.callTool({ name: 'echo', arguments: { text: 'héllo\n"wörld" ✓' } });
  summary.fail = await client.callTool({ name: 'fail', arguments: { message: 'boom' } });
  summary.crash = await client.callTool({ name: 'crash', arguments: {} });
  summary.unknownError = await expectMcpError(client.callTool({ name: 'no_such_tool', arguments: {} }));
  summary.ping = await client.ping();

  // End of input: the server must exit by itself (the transport sends SIGTERM after 2 s).
  const child = transport._process;
  await client.close();
  summary.serverExit = child ? { code: child.exitCode, signal: child.signalCode } : null;
} catch (error) {
  console.error('ts_client: unexpected exception:', error);
  clearTimeout(timer);
  await client.close().catch(() => {});
  process.exit(1);
}

clearTimeout(timer);
process.stdout.write(`${JSON.stringify(summary)}\n`);
