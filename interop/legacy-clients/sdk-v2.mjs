// A real published MCP client — the TypeScript SDK v2 (@modelcontextprotocol/client
// 2.4.0) in its DEFAULT mode (no versionNegotiation option, i.e. 'legacy':
// the plain 2025 initialize handshake) — driving cmd/wymcp served with
// -versions 2026-07-28,2025-11-25,2025-06-18. It proves that the SDK most
// clients will upgrade to keeps working against the server without opting
// into the 2026 era: initialize (2025-11-25, no session), tools/list,
// tools/call (text, structured content), progress on the call's SSE answer,
// and elicitation/create answered by the client's handler. A second client
// offers only 2025-06-18 (supportedProtocolVersions) and must get it. Every
// step asserts what it got; any mismatch exits non-zero.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import assert from 'node:assert/strict';
import { steps } from './steps.mjs';

const url = process.argv[2];
if (!url) {
  console.error('usage: node sdk-v2.mjs <mcp url>');
  process.exit(2);
}

const { step, summary } = steps('sdk v2');

// Default options apart from the elicitation capability (which ask_name
// needs): no versionNegotiation, no supportedProtocolVersions.
const client = new Client({ name: 'wymcp-interop-sdk-v2', version: '1.0.0' }, { capabilities: { elicitation: {} } });
const elicitations = [];
client.setRequestHandler('elicitation/create', async (req) => {
  elicitations.push(req.params);
  return { action: 'accept', content: { name: 'Ada' } };
});
const transport = new StreamableHTTPClientTransport(new URL(url));

await step('connect (initialize, default legacy mode)', async () => {
  await client.connect(transport);
  assert.equal(client.getProtocolEra(), 'legacy');
  assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
  assert.equal(transport.protocolVersion, '2025-11-25');
  assert.equal(transport.sessionId, undefined, 'stateless: no Mcp-Session-Id');
  assert.ok(client.getServerCapabilities()?.tools, 'tools capability');
});

await step('tools/list', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ['echo', 'add', 'sleep', 'ask_name', 'fail']) assert.ok(names.includes(want), `lists ${want}: ${names}`);
  for (const t of tools) assert.ok(t.description && t.inputSchema?.type === 'object', `${t.name} shape`);
});

await step('tools/call echo', async () => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello from SDK v2' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'hello from SDK v2' }]);
  assert.ok(!r.isError);
});

await step('tools/call sleep with progress (SSE)', async () => {
  const seen = [];
  const r = await client.callTool(
    { name: 'sleep', arguments: { ms: 50 } },
    { onprogress: (p) => seen.push(p.progress) },
  );
  assert.ok(!r.isError, JSON.stringify(r));
  assert.deepEqual(r.content, [{ type: 'text', text: 'slept 50 ms' }]);
  assert.ok(seen.length >= 3, `progress notifications: ${seen}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `increasing: ${seen}`);
});

await step('tools/call add (structured content)', async () => {
  const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
  assert.deepEqual(r.structuredContent, { sum: 42 });
  assert.ok(!r.isError);
});

await step('tools/call ask_name (elicitation/create answered)', async () => {
  const r = await client.callTool({ name: 'ask_name', arguments: {} });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(elicitations.length, 1, `elicitation requests: ${JSON.stringify(elicitations)}`);
  const text = r.content.map((c) => c.text).join('');
  assert.ok(text.includes('Ada'), `greeting: ${text}`);
});

await client.close();

// A client that offers only 2025-06-18: the server must accept that
// revision (it serves it) and the calls must work at it.
const old = new Client(
  { name: 'wymcp-interop-sdk-v2-0618', version: '1.0.0' },
  { capabilities: {}, supportedProtocolVersions: ['2025-06-18'] },
);
const oldTransport = new StreamableHTTPClientTransport(new URL(url));

await step('connect at 2025-06-18 (supportedProtocolVersions)', async () => {
  await old.connect(oldTransport);
  assert.equal(old.getNegotiatedProtocolVersion(), '2025-06-18');
  assert.equal(oldTransport.protocolVersion, '2025-06-18');
});

await step('2025-06-18: tools/list + tools/call echo', async () => {
  const { tools } = await old.listTools();
  assert.ok(tools.some((t) => t.name === 'echo'), 'lists echo');
  const r = await old.callTool({ name: 'echo', arguments: { text: 'hello from 2025-06-18' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'hello from 2025-06-18' }]);
});

await old.close();
summary();
