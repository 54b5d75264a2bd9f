// The TypeScript SDK v2 client's own subscriptions/listen support (revision
// 2026-07-28) against cmd/wymcp: it opens a listen stream, has the server's
// tool set change (the -tools conformance set's test_trigger_tool_change,
// called directly or through a gateway in front of it) and sees
// notifications/tools/list_changed on the stream, then the new list.
// Usage: node listen.mjs <mcp url>. Any mismatch exits non-zero.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import assert from 'node:assert/strict';

const url = process.argv[2];
if (!url) {
  console.error('usage: node listen.mjs <mcp url>');
  process.exit(2);
}

let passed = 0;
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${url})`);
  } catch (err) {
    console.error(`FAIL ${name} (${url}): ${err?.stack ?? err}`);
    process.exitCode = 1;
  }
}

// within rejects if p has not settled in ms: a notification that never
// comes fails the step instead of hanging the run.
function within(p, ms, what) {
  let timer;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no ${what} in ${ms} ms`)), ms); }),
  ]);
}

const client = new Client(
  { name: 'wymcp-interop-listen', version: '1.0.0' },
  { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
let changes = 0;
let changed = () => {};
client.setNotificationHandler('notifications/tools/list_changed', () => {
  changes++;
  changed();
});

await step('connect: server/discover advertises tools.listChanged', async () => {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const d = await client.discover();
  assert.equal(d.capabilities.tools?.listChanged, true, JSON.stringify(d.capabilities));
});

let sub;
await step('subscriptions/listen acknowledged', async () => {
  sub = await client.listen({ toolsListChanged: true });
  assert.equal(sub.honoredFilter.toolsListChanged, true, JSON.stringify(sub.honoredFilter));
});

await step('a change is told on the stream', async () => {
  const names = (await client.listTools()).tools.map((t) => t.name);
  const trigger = names.find((n) => n.endsWith('test_trigger_tool_change'));
  assert.ok(trigger, `a trigger tool among ${names}`);
  const dynamic = trigger.replace(/test_trigger_tool_change$/, 'test_dynamic_tool');
  const had = names.includes(dynamic);
  const told = new Promise((resolve) => { changed = resolve; });
  const r = await client.callTool({ name: trigger, arguments: {} });
  assert.ok(!r.isError, JSON.stringify(r));
  await within(told, 15000, 'notifications/tools/list_changed');
  const after = (await client.listTools()).tools.map((t) => t.name);
  assert.equal(after.includes(dynamic), !had, `${dynamic} listed after the change: ${after}`);
});

await step('close', async () => {
  await sub.close();
  assert.equal(await sub.closed, 'local');
  assert.ok(changes >= 1);
});

await client.close();
console.log(`${passed} passed, ${process.exitCode ? 1 : 0} failed (${url})`);
