// What the TypeScript SDK interop clients (ts_client.mjs, ts_http_client.mjs) share.
import { McpError } from '@modelcontextprotocol/sdk/types.js';

// A JSON-RPC error as the SDK surfaces it; anything else is unexpected and rethrown.
export async function expectMcpError(promise) {
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

// Exits with status 3 if the client is still running after `ms`; clear the returned timer.
export function failAfter(ms, name) {
  return setTimeout(() => {
    console.error(`${name}: timed out after ${ms / 1000} s`);
    process.exit(3);
  }, ms);
}

// What every transport's summary holds first: the server's facts, its tools, and a call of
// add, echo (with `echoText`), fail and an unknown tool.
export async function summariseBasics(client, summary, echoText) {
  summary.serverVersion = client.getServerVersion() ?? null;
  summary.capabilities = client.getServerCapabilities() ?? null;
  summary.instructions = client.getInstructions() ?? null;

  const listed = await client.listTools();
  summary.tools = listed.tools.map((t) => t.name);
  summary.addTool = listed.tools.find((t) => t.name === 'add') ?? null;

  // callTool validates structuredContent against add's outputSchema (cached by listTools).
  summary.add = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
  summary.echo = await client.callTool({ name: 'echo', arguments: { text: echoText } });
  summary.fail = await client.callTool({ name: 'fail', arguments: { message: 'boom' } });
  summary.unknownError = await expectMcpError(client.callTool({ name: 'no_such_tool', arguments: {} }));
}
