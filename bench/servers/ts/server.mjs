// TypeScript SDK v2 echo server for the wymcp bench harness.
// createMcpHandler(factory) serves 2026-07-28 (and 2025-era stateless legacy);
// toNodeHandler bridges it to node:http. The SDK requires a fresh McpServer
// per request, so the factory builds one each time (its documented idiom).
import http from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

const port = Number(process.env.PORT || 38190);

const factory = () => {
  const server = new McpServer({ name: 'echo-ts', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes the given text back as one text block.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
};

const handler = toNodeHandler(createMcpHandler(factory));
const srv = http.createServer((req, res) => {
  if (req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  handler(req, res).catch((err) => {
    console.error(err);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
srv.keepAliveTimeout = 120000;
srv.listen(port, '127.0.0.1', () => console.error(`ts echo on 127.0.0.1:${port}/mcp`));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
