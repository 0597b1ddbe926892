// Interop: the official TypeScript MCP SDK client drives an mcpline server over Streamable HTTP.
//
//   node tests/interop/ts_http_client.mjs <url>     (e.g. http://127.0.0.1:8000/mcp)
//
// Connects (initialize: a session under Mcp-Session-Id), lists tools, calls add/echo/fail and an
// unknown tool, lists and reads resources, lists, gets and completes prompts, sends several calls
// at once, terminates the session (DELETE), checks that a request in the deleted session gets
// 404, connects a second client, and prints ONE JSON object on stdout summarising what it
// observed (asserted on by tests/test_interop_http.py). Diagnostics go to stderr. Exits non-zero
// on any exception the script did not expect.

import process from 'node:process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expectMcpError, failAfter, summariseBasics } from './common.mjs';

const [url] = process.argv.slice(2);
if (!url) {
  console.error('usage: node ts_http_client.mjs <url>');
  process.exit(2);
}

const timer = failAfter(60_000, 'ts_http_client');

const summary = {};
const clients = [];

function newClient() {
  const client = new Client({ name: 'mcpline-interop-ts-http', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  clients.push(client);
  return { client, transport };
}

try {
  const { client, transport } = newClient();
  await client.connect(transport);
  // The client hands the negotiated version to the transport, which sends it as a header.
  summary.protocolVersion = transport.protocolVersion ?? null;
  summary.sessionId = transport.sessionId ?? null;
  await summariseBasics(client, summary, 'héllo\n"wörld" ✓ 日本');

  summary.resources = (await client.listResources()).resources;
  summary.resourceTemplates = (await client.listResourceTemplates()).resourceTemplates;
  summary.config = await client.readResource({ uri: 'config://app' });
  summary.userName = await client.readResource({ uri: 'users://7/name' });

  summary.prompts = (await client.listPrompts()).prompts;
  summary.review = await client.getPrompt({ name: 'review', arguments: { code: 'x = 1', focus: 'style' } });
  summary.completion = await client.complete({
    ref: { type: 'ref/prompt', name: 'review' },
    argument: { name: 'focus', value: 's' },
  });

  // Several requests in flight at once over the one session (one POST each).
  {
    const adds = Array.from({ length: 10 }, (_, i) =>
      client.callTool({ name: 'add', arguments: { a: i, b: 100 * i } }),
    );
    const echoes = Array.from({ length: 5 }, (_, i) =>
      client.callTool({ name: 'echo', arguments: { text: `écho ${i}` } }),
    );
    const [addResults, echoResults, ping] = await Promise.all([
      Promise.all(adds),
      Promise.all(echoes),
      client.ping(),
    ]);
    summary.concurrent = { adds: addResults, echoes: echoResults, ping };
  }

  // Terminate the session (DELETE); a request that still names it must get 404.
  {
    const old = transport.sessionId;
    await transport.terminateSession(); // throws unless the server answered 2xx or 405
    const stale = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': old,
        'mcp-protocol-version': summary.protocolVersion,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
    });
    await stale.body?.cancel();
    summary.terminate = { sessionIdAfter: transport.sessionId ?? null, staleStatus: stale.status };
    await client.close();
  }

  // The server still serves: a fresh client gets a fresh session.
  {
    const again = newClient();
    await again.client.connect(again.transport);
    summary.again = {
      sessionId: again.transport.sessionId ?? null,
      add: await again.client.callTool({ name: 'add', arguments: { a: 4, b: 5 } }),
    };
    await again.transport.terminateSession();
    await again.client.close();
  }
} catch (error) {
  console.error('ts_http_client: unexpected exception:', error);
  clearTimeout(timer);
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  process.exit(1);
}

clearTimeout(timer);
process.stdout.write(`${JSON.stringify(summary)}\n`);
