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
