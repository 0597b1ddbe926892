// Interop: the official TypeScript MCP SDK client drives an mcpline server over stdio.
//
//   node tests/interop/ts_client.mjs <python-executable> <server-script>
//
// Connects (initialize), lists tools, calls add/echo/fail/crash and an unknown tool, pings,
// pings while a long call is in flight, aborts a call with an AbortSignal and calls again,
// closes stdin, and prints ONE JSON object on stdout summarising what it observed (asserted on
// by tests/test_interop_typescript_sdk.py). Diagnostics go to stderr. Exits non-zero on any
// exception the script did not expect.

import process from 'node:process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expectMcpError, failAfter, summariseBasics } from './common.mjs';

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

// Record outbound messages too, to find the id of the aborted call and check that no
// response for it ever arrived.
const outbound = [];
const originalSend = transport.send.bind(transport);
transport.send = (message, options) => {
  outbound.push(message);
  return originalSend(message, options);
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const client = new Client({ name: 'mcpline-interop-ts', version: '0.0.0' });
const summary = {};

const timer = failAfter(60_000, 'ts_client');

try {
  await client.connect(transport);
  const initialize = inbound.find((m) => m.result && typeof m.result.protocolVersion === 'string');
  summary.protocolVersion = initialize?.result.protocolVersion ?? null;
  await summariseBasics(client, summary, 'héllo\n"wörld" ✓');
  summary.crash = await client.callTool({ name: 'crash', arguments: {} });
  summary.ping = await client.ping();
  summary.prompts = (await client.listPrompts()).prompts;
  summary.review = await client.getPrompt({ name: 'review', arguments: { code: 'x = 1', focus: 'style' } });
  summary.missingArgument = await expectMcpError(client.getPrompt({ name: 'review', arguments: {} }));
  summary.completion = await client.complete({
    ref: { type: 'ref/prompt', name: 'review' },
    argument: { name: 'focus', value: 's' },
  });
  summary.resources = (await client.listResources()).resources;
  summary.resourceTemplates = (await client.listResourceTemplates()).resourceTemplates;
  summary.userName = await client.readResource({ uri: 'users://7/name' });
  summary.missingResource = await expectMcpError(client.readResource({ uri: 'missing://x' }));

  // Ping while a long call (slow: 3 s, not cancellable) is in flight.
  {
    let callDone = false;
    const longCall = client
      .callTool({ name: 'slow', arguments: { seconds: 3 } })
      .then((result) => {
        callDone = true;
        return result;
      });
    await sleep(500);
    const started = Date.now();
    const pong = await client.ping();
    summary.pingDuringCall = {
      result: pong,
      ms: Date.now() - started,
      callPendingAfterPing: !callDone,
    };
    summary.pingDuringCall.call = await longCall;
  }

  // Abort a call (wait: 30 s unless cancelled) with an AbortSignal, then call again.
  {
    const controller = new AbortController();
    const aborted = client.callTool({ name: 'wait', arguments: { seconds: 30 } }, undefined, {
      signal: controller.signal,
    });
    await sleep(500);
    controller.abort('test abort');
    const outcome = {};
    try {
      outcome.unexpectedResult = await aborted;
    } catch (error) {
      outcome.error = String(error?.message ?? error);
    }
    const call = outbound.find((m) => m.method === 'tools/call' && m.params?.name === 'wait');
    const cancel = outbound.find((m) => m.method === 'notifications/cancelled');
    outcome.cancelSent = Boolean(cancel && call && cancel.params?.requestId === call.id);
    const started = Date.now();
    outcome.next = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    outcome.nextMs = Date.now() - started;
    await sleep(500);
    outcome.responsesForAborted = call ? inbound.filter((m) => m.id === call.id).length : null;
    summary.abort = outcome;
  }

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
