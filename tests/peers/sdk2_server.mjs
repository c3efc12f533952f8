// Interoperability peer: an MCP tool server built on the official TypeScript SDK 2.x
// (@modelcontextprotocol/server, pinned in tests/package.json), serving both protocol eras
// (2025 initialize handshake and 2026-07-28 per-request _meta) from one tool definition.
//
// Usage:
//   node sdk2_server.mjs [--transport stdio|http] [--host 127.0.0.1] [--port 0] [--path /mcp]
//                        [--era dual|modern|legacy] [--name NAME] [--version VERSION]
//                        [--ttl-ms N] [--cache-scope public|private]
//
//   --transport    stdio (default) or http (Streamable HTTP on one endpoint)
//   --host/--port  HTTP bind address (loopback only) and port; 0 picks a free port
//   --path         HTTP endpoint path (default /mcp); other paths answer 404
//   --era          dual (default): both eras; modern: 2025-era requests are refused with the
//                  unsupported-protocol-version error; legacy: the 2025 era only (no
//                  server/discover, no per-request _meta)
//   --name/--version  serverInfo (default udon-sdk2-peer / 2.4.0-peer)
//   --ttl-ms/--cache-scope  cache hints of tools/list and server/discover (default 0 / public)
//
// In HTTP mode it prints {"event":"listening","port":N,"url":"http://127.0.0.1:N/mcp"} on
// stdout once it accepts connections (stderr carries diagnostics), and exits on SIGTERM or
// SIGINT. Host and Origin headers must name a loopback host (DNS rebinding protection).
//
// Tools (every one has an inputSchema; `add` also has an outputSchema):
//   echo      {text: string}               -> text content, the text back
//   add       {a: number, b: number}       -> structuredContent {sum}, per its outputSchema
//   lookup    {region: string, key?: string}; region carries x-mcp-header "Region", so
//             modern HTTP clients must mirror it into Mcp-Param-Region
//   add_tool  {name: string}               -> adds a tool NAME (an echo) to the catalog and
//             announces the change: notifications/tools/list_changed to legacy sessions
//             and to modern subscriptions/listen streams that asked for toolsListChanged.
//             Added tools persist for the life of the process (every connection sees them).
import http from 'node:http';
import {
  McpServer,
  createMcpHandler,
  fromJsonSchema,
  hostHeaderValidationResponse,
  legacyStatelessFallback,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { readBody, toWebRequest, writeWebResponse } from './http-bridge.mjs';

function parseArgs(argv) {
  const options = {
    transport: 'stdio', host: '127.0.0.1', port: 0, path: '/mcp', era: 'dual',
    name: 'udon-sdk2-peer', version: '2.4.0-peer', ttlMs: 0, cacheScope: 'public',
  };
  const value = (i) => {
    if (i >= argv.length) throw new Error(`${argv[i - 1]} needs a value`);
    return argv[i];
  };
  for (let i = 0; i < argv.length; ++i) {
    switch (argv[i]) {
      case '--transport': options.transport = value(++i); break;
      case '--host': options.host = value(++i); break;
      case '--port': options.port = Number(value(++i)); break;
      case '--path': options.path = value(++i); break;
      case '--era': options.era = value(++i); break;
      case '--name': options.name = value(++i); break;
      case '--version': options.version = value(++i); break;
      case '--ttl-ms': options.ttlMs = Number(value(++i)); break;
      case '--cache-scope': options.cacheScope = value(++i); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!['stdio', 'http'].includes(options.transport)) throw new Error('--transport: stdio or http');
  if (!['dual', 'modern', 'legacy'].includes(options.era)) throw new Error('--era: dual, modern or legacy');
  if (!['public', 'private'].includes(options.cacheScope)) throw new Error('--cache-scope: public or private');
  if (!Number.isSafeInteger(options.ttlMs) || options.ttlMs < 0) throw new Error('--ttl-ms: a non-negative integer');
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new Error('--port: 0-65535');
  if (!['127.0.0.1', 'localhost', '::1'].includes(options.host)) throw new Error('--host: loopback only');
  return options;
}

let options;
try {
  options = parseArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`sdk2_server: ${error.message}\n`);
  process.exit(2);
}

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const added = [];        // names added by add_tool, shared by every server instance
const instances = new Set();  // live stdio instances (HTTP builds one per request)
let announce = () => {};  // set per transport: tells listeners the catalog changed

function registerEcho(server, name, description) {
  server.registerTool(name, {
    description,
    inputSchema: fromJsonSchema({
      type: 'object', properties: { text: { type: 'string' } }, required: ['text'],
    }),
  }, async ({ text: value }) => text(value));
}

function buildServer() {
  const hint = { ttlMs: options.ttlMs, cacheScope: options.cacheScope };
  const server = new McpServer(
    { name: options.name, version: options.version },
    {
      capabilities: { tools: { listChanged: true } },
      cacheHints: { 'tools/list': hint, 'server/discover': hint },
    },
  );
  registerEcho(server, 'echo', 'Echoes its text.');
  server.registerTool('add', {
    description: 'Adds two numbers.',
    inputSchema: fromJsonSchema({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    }),
    outputSchema: fromJsonSchema({
      type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'],
    }),
  }, async ({ a, b }) => ({
    content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }],
    structuredContent: { sum: a + b },
  }));
  server.registerTool('lookup', {
    description: 'Looks a key up in a region; the region is mirrored into a header over HTTP.',
    inputSchema: fromJsonSchema({
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        key: { type: 'string' },
      },
      required: ['region'],
    }),
  }, async ({ region, key }) => text(`${region}:${key ?? ''}`));
  server.registerTool('add_tool', {
    description: 'Adds an echo tool with the given name and announces the list change.',
    inputSchema: fromJsonSchema({
      type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'],
    }),
  }, async ({ name }) => {
    if (added.includes(name) || ['echo', 'add', 'lookup', 'add_tool'].includes(name)) {
      return { ...text(`tool ${name} already exists`), isError: true };
    }
    added.push(name);
    for (const instance of instances) registerEcho(instance, name, 'A tool added by add_tool.');
    announce();
    return text(`added ${name}`);
  });
  for (const name of added) registerEcho(server, name, 'A tool added by add_tool.');
  return server;
}

function stdioFactory() {
  const server = buildServer();
  instances.add(server);
  return server;
}

async function serveOverStdio() {
  // registerTool on a connected instance already tells its client (legacy: the session's
  // notification; modern: the connection's listen streams), so announce has nothing to add.
  if (options.era === 'legacy') {
    // A plain 2025-era server: one instance, connected directly, no era routing.
    await stdioFactory().connect(new StdioServerTransport());
    return;
  }
  serveStdio(stdioFactory, {
    legacy: options.era === 'modern' ? 'reject' : 'serve',
    onerror: (error) => process.stderr.write(`sdk2_server: ${error.message}\n`),
  });
}

async function serveOverHttp() {
  const factory = () => buildServer();
  const handler = options.era === 'legacy'
    ? { fetch: legacyStatelessFallback(factory), close: async () => {}, notify: { toolsChanged() {} } }
    : createMcpHandler(factory, { legacy: options.era === 'modern' ? 'reject' : 'stateless' });
  announce = () => handler.notify.toolsChanged();
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname !== options.path) {
      res.writeHead(404).end();
      return;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    try {
      const request = toWebRequest(req, await readBody(req), abort.signal);
      const rejected = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
        originValidationResponse(request, localhostAllowedOrigins());
      await writeWebResponse(rejected ?? await handler.fetch(request), res);
    } catch (error) {
      process.stderr.write(`sdk2_server: ${error.message}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(options.port, options.host, () => {
    const { port } = server.address();
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    process.stdout.write(JSON.stringify({ event: 'listening', port, url: `http://${host}:${port}${options.path}` }) + '\n');
  });
  const stop = async () => {
    await handler.close();
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (options.transport === 'http') await serveOverHttp();
else await serveOverStdio();
