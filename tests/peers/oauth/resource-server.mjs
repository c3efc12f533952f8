// Test peer: a remote MCP server behind OAuth, as the hosted ones are. A Streamable HTTP
// server on the official TypeScript SDK (@modelcontextprotocol/server 2.x, pinned in
// tests/package.json; both protocol eras as the SDK serves them: the 2025 initialize
// handshake, stateless, and 2026-07-28) that accepts only bearer JWTs issued by one
// authorization server (authorization-server.mjs) for its own resource: the signature is
// checked with jose against the issuer's JWKS, `iss` must be the issuer and `aud` this
// server's URL.
//
// Usage:
//   node resource-server.mjs --issuer URL [--port N] [--path /mcp] [--era dual|modern|legacy]
//        [--challenge-scope SCOPE] [--metadata-at path|root|both|none]
//        [--no-resource-metadata] [--log-requests]
//
//   --issuer             the one authorization server whose tokens are accepted
//   --port/--path        listen port (default 0: a free one) and MCP endpoint (default /mcp)
//   --era                dual (default), modern (2026-07-28 only), legacy (2025 only)
//   --challenge-scope    the scope named in the 401 challenge (default "mcp:tools")
//   --metadata-at        where RFC 9728 protected resource metadata is served: path
//                        (default; /.well-known/oauth-protected-resource/mcp, path-inserted),
//                        root (/.well-known/oauth-protected-resource), both, or none
//   --no-resource-metadata  the 401 challenge leaves resource_metadata out (the client then
//                        has to try the well-known locations)
//   --log-requests       one line per request on stderr: method, path, JSON-RPC method and
//                        the auth outcome (never a token)
//
// Answers:
//   no or bad token -> 401, WWW-Authenticate: Bearer resource_metadata="…", scope="…"
//                      (error="invalid_token" when a token was sent)
//   tools/call of admin_reset with a token without "mcp:admin" -> 403,
//                      WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp:tools mcp:admin"
// Tools: echo {text}, add {a, b} (structuredContent {sum}), whoami {} (the token's sub and
// scope), admin_reset {} (needs mcp:admin).
//
// Prints {"event":"listening","port":N,"url":"http://127.0.0.1:N/mcp","resource":…} on stdout
// once it accepts connections. Exits on SIGTERM or SIGINT.
import http from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import {
  McpServer,
  createMcpHandler,
  fromJsonSchema,
  legacyStatelessFallback,
} from '@modelcontextprotocol/server';
import {
  parseArgsOrExit, readBody, stopOnSignals, toWebRequest, writeWebResponse,
} from '../http-bridge.mjs';

const SCOPES = ['mcp:tools', 'mcp:admin'];

function parseArgs(argv) {
  const options = {
    issuer: undefined, port: 0, path: '/mcp', era: 'dual', challengeScope: 'mcp:tools',
    metadataAt: 'path', resourceMetadataInChallenge: true, logRequests: false,
  };
  const value = (i) => {
    if (i >= argv.length) throw new Error(`${argv[i - 1]} needs a value`);
    return argv[i];
  };
  for (let i = 0; i < argv.length; ++i) {
    switch (argv[i]) {
      case '--issuer': options.issuer = value(++i); break;
      case '--port': options.port = Number(value(++i)); break;
      case '--path': options.path = value(++i); break;
      case '--era': options.era = value(++i); break;
      case '--challenge-scope': options.challengeScope = value(++i); break;
      case '--metadata-at': options.metadataAt = value(++i); break;
      case '--no-resource-metadata': options.resourceMetadataInChallenge = false; break;
      case '--log-requests': options.logRequests = true; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!options.issuer) throw new Error('--issuer is required');
  if (!['dual', 'modern', 'legacy'].includes(options.era)) throw new Error('--era: dual, modern or legacy');
  if (!['path', 'root', 'both', 'none'].includes(options.metadataAt)) throw new Error('--metadata-at: path, root, both or none');
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new Error('--port: 0-65535');
  if (!options.path.startsWith('/')) throw new Error('--path must start with /');
  return options;
}

const options = parseArgsOrExit('resource-server', parseArgs);

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const noArguments = fromJsonSchema({ type: 'object', properties: {} });

function buildServer(claims) {
  const server = new McpServer({ name: 'udon-oauth-resource-peer', version: '1.0.0' },
    { capabilities: { tools: {} } });
  server.registerTool('echo', {
    description: 'Echoes its text.',
    inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
  }, async ({ text: value }) => text(value));
  server.registerTool('add', {
    description: 'Adds two numbers.',
    inputSchema: fromJsonSchema({
      type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'],
    }),
    outputSchema: fromJsonSchema({ type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] }),
  }, async ({ a, b }) => ({
    content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }], structuredContent: { sum: a + b },
  }));
  server.registerTool('whoami', {
    description: 'The subject and scope of the bearer token of this request.',
    inputSchema: noArguments,
  }, async () => text(JSON.stringify({ sub: claims?.sub ?? null, scope: claims?.scope ?? null })));
  server.registerTool('admin_reset', {
    description: 'An administrative tool: needs the mcp:admin scope.',
    inputSchema: noArguments,
  }, async () => text('reset'));
  return server;
}

// The issuer's JWKS, found through its metadata once (the metadata names jwks_uri).
let jwks;
async function keySet() {
  if (!jwks) {
    const response = await fetch(new URL('/.well-known/openid-configuration', options.issuer), {
      signal: AbortSignal.timeout(5000),
    });
    if (!response.ok) throw new Error(`issuer metadata: HTTP ${response.status}`);
    const metadata = await response.json();
    jwks = createRemoteJWKSet(new URL(metadata.jwks_uri));
  }
  return jwks;
}

async function verifiedClaims(authorization, resource) {
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(authorization ?? '');
  if (!match) return { error: authorization ? 'invalid_request' : undefined };
  try {
    const { payload } = await jwtVerify(match[1], await keySet(), {
      issuer: options.issuer, audience: resource, typ: 'at+jwt',
    });
    return { claims: payload };
  } catch {
    return { error: 'invalid_token' };
  }
}

function challenge(fields, metadataUrl) {
  const parts = [];
  if (fields.error) parts.push(`error="${fields.error}"`);
  if (options.resourceMetadataInChallenge) parts.push(`resource_metadata="${metadataUrl}"`);
  if (fields.scope) parts.push(`scope="${fields.scope}"`);
  return `Bearer ${parts.join(', ')}`;
}

function jsonRpcMethods(body) {
  try {
    const parsed = JSON.parse(body.toString('utf8'));
    return (Array.isArray(parsed) ? parsed : [parsed]).filter((m) => m && typeof m === 'object');
  } catch {
    return [];
  }
}

function needsAdmin(messages) {
  return messages.some((m) => m.method === 'tools/call' && m.params?.name === 'admin_reset');
}

function metadataPaths() {
  const paths = [];
  if (['path', 'both'].includes(options.metadataAt)) paths.push(`/.well-known/oauth-protected-resource${options.path}`);
  if (['root', 'both'].includes(options.metadataAt)) paths.push('/.well-known/oauth-protected-resource');
  return paths;
}

function sendJson(res, status, value, extraHeaders = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...extraHeaders });
  res.end(JSON.stringify(value));
}

function log(req, rpc, outcome) {
  if (!options.logRequests) return;
  const methods = rpc.map((m) => m.method ?? 'response').join(',');
  process.stderr.write(`resource-server: ${req.method} ${new URL(req.url, 'http://x').pathname} ${methods || '-'} ${outcome}\n`);
}

function makeHandler(claims) {
  const factory = () => buildServer(claims);
  return options.era === 'legacy'
    ? { fetch: legacyStatelessFallback(factory) }
    : createMcpHandler(factory, { legacy: options.era === 'modern' ? 'reject' : 'stateless' });
}

async function serveMcp(req, res, site) {
  const body = await readBody(req);
  const rpc = jsonRpcMethods(body);
  const { claims, error } = await verifiedClaims(req.headers.authorization, site.resource);
  if (!claims) {
    log(req, rpc, `401 ${error ?? 'no_token'}`);
    res.writeHead(401, { 'www-authenticate': challenge({ error, scope: options.challengeScope }, site.metadataUrl) });
    res.end();
    return;
  }
  const granted = String(claims.scope ?? '').split(' ');
  if (needsAdmin(rpc) && !granted.includes('mcp:admin')) {
    log(req, rpc, '403 insufficient_scope');
    res.writeHead(403, {
      'www-authenticate': challenge({ error: 'insufficient_scope', scope: SCOPES.join(' ') }, site.metadataUrl),
    });
    res.end();
    return;
  }
  log(req, rpc, 'ok');
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  await writeWebResponse(await makeHandler(claims).fetch(toWebRequest(req, body, abort.signal)), res);
}

function listen() {
  const site = {};
  const server = http.createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://localhost');
    try {
      if (req.method === 'GET' && metadataPaths().includes(pathname)) {
        sendJson(res, 200, {
          resource: site.resource,
          authorization_servers: [options.issuer],
          scopes_supported: SCOPES,
          bearer_methods_supported: ['header'],
        });
      } else if (pathname === options.path) {
        await serveMcp(req, res, site);
      } else {
        res.writeHead(404).end();
      }
    } catch (error) {
      process.stderr.write(`resource-server: ${error.message}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(options.port, '127.0.0.1', () => {
    const { port } = server.address();
    site.resource = `http://127.0.0.1:${port}${options.path}`;
    site.metadataUrl = `http://127.0.0.1:${port}${metadataPaths()[0] ?? `/.well-known/oauth-protected-resource${options.path}`}`;
    process.stdout.write(JSON.stringify({ event: 'listening', port, url: site.resource, resource: site.resource }) + '\n');
  });
  stopOnSignals(server);
}

listen();
