// A real published 2025-era MCP client — the TypeScript SDK v1
// (@modelcontextprotocol/sdk 1.32.2) in its default mode — driving cmd/wymcp
// served with -versions 2026-07-28,2025-11-25,2025-06-18. It proves that a
// client that only knows the 2025 protocol can use the server unchanged:
// initialize (negotiating 2025-11-25, no session), tools/list, tools/call
// (text, structured content, isError), progress notifications on the call's
// SSE answer, and an elicitation/create request sent to the client during a
// call, answered by the client's handler (accepted, then declined). Every
// step asserts what it got; any mismatch exits non-zero.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';
import { steps } from './steps.mjs';

const url = process.argv[2];
if (!url) {
  console.error('usage: node sdk-v1.mjs <mcp url>');
  process.exit(2);
}

const { step, summary } = steps('sdk v1');

// The client declares elicitation (form mode) so that ask_name may ask it.
const client = new Client({ name: 'wymcp-interop-sdk-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
// The user's answer to the next elicitation/create (changed by a later step).
let answer = { action: 'accept', content: { name: 'Ada' } };
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicitations.push(req.params);
  return answer;
});
const transport = new StreamableHTTPClientTransport(new URL(url));

await step('connect (initialize, 2025-11-25)', async () => {
  await client.connect(transport);
  // The SDK sets the negotiated version on the transport (the
  // MCP-Protocol-Version header of every later request).
  assert.equal(transport.protocolVersion, '2025-11-25');
  assert.equal(transport.sessionId, undefined, 'stateless: no Mcp-Session-Id');
  assert.ok(client.getServerVersion()?.name, `serverInfo: ${JSON.stringify(client.getServerVersion())}`);
  assert.ok(client.getServerCapabilities()?.tools, 'tools capability');
});

await step('ping', async () => {
  assert.deepEqual(await client.ping(), {});
});

await step('tools/list', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ['echo', 'add', 'sleep', 'ask_name', 'fail']) assert.ok(names.includes(want), `lists ${want}: ${names}`);
  for (const t of tools) assert.ok(t.description && t.inputSchema?.type === 'object', `${t.name} shape`);
});

await step('tools/call echo', async () => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello from SDK v1' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'hello from SDK v1' }]);
  assert.ok(!r.isError);
});

await step('tools/call add (structured content)', async () => {
  const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
  assert.deepEqual(r.structuredContent, { sum: 42 });
  assert.ok(!r.isError);
});

await step('tools/call sleep with progress (SSE)', async () => {
  const seen = [];
  const r = await client.callTool({ name: 'sleep', arguments: { ms: 50 } }, undefined, {
    onprogress: (p) => seen.push(p.progress),
  });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.deepEqual(r.content, [{ type: 'text', text: 'slept 50 ms' }]);
  assert.ok(seen.length >= 3, `progress notifications: ${seen}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `increasing: ${seen}`);
});

await step('tools/call fail (isError result)', async () => {
  const r = await client.callTool({ name: 'fail', arguments: {} });
  assert.equal(r.isError, true);
});

await step('tools/call ask_name (elicitation/create answered)', async () => {
  const r = await client.callTool({ name: 'ask_name', arguments: {} });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(elicitations.length, 1, `elicitation requests: ${JSON.stringify(elicitations)}`);
  assert.ok(elicitations[0].requestedSchema?.properties?.name, `asked for a name: ${JSON.stringify(elicitations[0])}`);
  const text = r.content.map((c) => c.text).join('');
  assert.ok(text.includes('Ada'), `greeting: ${text}`);
});

await step('tools/call ask_name, declined', async () => {
  answer = { action: 'decline' };
  const r = await client.callTool({ name: 'ask_name', arguments: {} });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(elicitations.length, 2, 'a second elicitation/create');
  const text = r.content.map((c) => c.text).join('');
  assert.ok(text.includes('decline') && !text.includes('Ada'), `answer to a decline: ${text}`);
});

await client.close();

// A second client asking for 2025-06-18 is not possible with SDK v1: its
// connect() always offers LATEST_PROTOCOL_VERSION (2025-11-25) and has no
// option to change it. The 2025-06-18 negotiation is exercised by the SDK v2
// script instead (supportedProtocolVersions).

summary();
