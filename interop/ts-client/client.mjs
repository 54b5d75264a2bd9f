// A real published MCP client — the TypeScript SDK v2 (@modelcontextprotocol/client
// 2.4.0), pinned to revision 2026-07-28 — doing what a user's client does:
// connect (server/discover), list the tools, call them, and follow a progress
// stream. Every step asserts what it got; any mismatch exits non-zero.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import assert from 'node:assert/strict';

const url = process.argv[2];
if (!url) {
  console.error('usage: node client.mjs <mcp url>');
  process.exit(2);
}

let passed = 0;
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    console.error(`FAIL ${name}: ${err?.stack ?? err}`);
    process.exitCode = 1;
  }
}

const client = new Client(
  { name: 'wymcp-interop', version: '1.0.0' },
  { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
const transport = new StreamableHTTPClientTransport(new URL(url));

await step('connect (server/discover)', async () => {
  await client.connect(transport);
  const d = await client.discover();
  assert.deepEqual(d.supportedVersions, ['2026-07-28']);
  assert.ok(d.capabilities.tools, 'tools capability');
});

let tools = [];
await step('tools/list', async () => {
  ({ tools } = await client.listTools());
  const names = tools.map((t) => t.name);
  for (const want of ['echo', 'add', 'sleep', 'fail']) assert.ok(names.includes(want), `lists ${want}: ${names}`);
  for (const t of tools) assert.ok(t.description && t.inputSchema?.type === 'object', `${t.name} shape`);
});

await step('tools/call echo', async () => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hello from TS' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'hello from TS' }]);
  assert.ok(!r.isError);
});

await step('tools/call add (structured content)', async () => {
  const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
  assert.deepEqual(r.structuredContent, { sum: 42 });
});

await step('tools/call fail (isError result)', async () => {
  const r = await client.callTool({ name: 'fail', arguments: {} });
  assert.equal(r.isError, true);
});

await step('tools/call invalid arguments (isError result)', async () => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 5 } });
  assert.equal(r.isError, true);
});

await step('tools/call unknown tool (-32602)', async () => {
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (err) => err?.code === -32602);
});

await step('tools/call sleep with progress (SSE)', async () => {
  const seen = [];
  const r = await client.callTool(
    { name: 'sleep', arguments: { ms: 30 } },
    { onprogress: (p) => seen.push(p.progress) },
  );
  assert.ok(!r.isError, JSON.stringify(r));
  assert.ok(seen.length >= 3, `progress notifications: ${seen}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `increasing: ${seen}`);
});

await client.close();
console.log(`${passed} passed, ${process.exitCode ? 1 : 0} failed`);
