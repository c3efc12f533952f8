// Test peer: the hostile cases of issue 39, one mode each. One process plays a remote MCP
// server and its authorization server on one origin (http://127.0.0.1:P), plus a second,
// "other" origin (another port) that the hostile modes try to lure the client to. Its
// authorization endpoint approves at once (no forms), so login-driver.mjs, given the
// authorization URL, delivers the redirect straight to the client's loopback listener.
//
// Usage:
//   node hostile.mjs MODE [--port N] [--huge-bytes N] [--slow-ms N]
//
// Modes (what the client must do: refuse with a clear error and store nothing, unless said):
//   resource-mismatch     the protected resource metadata names another resource
//   issuer-mismatch       the authorization server metadata's issuer is not the URL it was
//                         fetched for
//   no-s256               the authorization server lists only "plain" PKCE
//   token-garbage         the token endpoint answers 200 with an HTML page
//   token-huge            the token endpoint answers 200 with a JSON body of --huge-bytes
//                         (default 64 MiB) that would be one enormous access token
//   token-slow            the token endpoint sends its headers, then one byte every
//                         --slow-ms (default 1000) for ten minutes
//   always-401            logins succeed, but the MCP endpoint answers 401 invalid_token
//                         to every token (a client must stop after a bounded number of logins)
//   metadata-other-host   the 401 challenge's resource_metadata is on the other origin,
//                         whose metadata claims this resource and names the other origin
//                         as its authorization server
//   redirect-other-origin the MCP endpoint answers requests that carry a valid token with a
//                         307 to the other origin (the token must not follow)
//   call-401-once         not hostile: the first tools/call is answered 401 invalid_token
//                         (nothing runs) and its token is forgotten; a client refreshes
//                         once and starts again from the listing (report.toolCalls counts
//                         the calls that ran)
//   no-iss                not hostile under 2025-11-25: the authorization server does not
//                         advertise RFC 9207 and its redirect carries no iss (2026-07-28
//                         requires it: such a login must be refused)
//   cdn-wellknown         not hostile, a fallback to get right: the challenge has no
//                         resource_metadata; the path-inserted well-known locations answer
//                         403 and 401 (HTML, as a CDN does) where a 404 was expected; the
//                         root protected resource metadata and the issuer's (/tenant)
//                         path-appended OpenID configuration work. The login must succeed.
//
// GET /_hostile/report (main origin) answers the counters as JSON:
//   {"register":N,"authorize":N,"token":N,"mcp":N,"mcpWithValidToken":N,"toolCalls":N,
//    "metadata":N (authorization server metadata fetched),
//    "otherOrigin":{"requests":N,"withAuthorization":N,"paths":[…]}}
// GET /_hostile/refuse-next?method=M (any mode): the next MCP request of method M (for example
// tools/list) that carries a valid token is answered 401 invalid_token and that token is
// forgotten, as a server that revoked it does.
// Prints {"event":"listening","mode":…,"url":"http://127.0.0.1:P/mcp","resource":…,
// "issuer":…,"otherOrigin":…,"report":…} on stdout once both origins accept connections.
import http from 'node:http';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import {
  parseArgsOrExit, readBody, stopOnSignals, toWebRequest, writeWebResponse,
} from '../http-bridge.mjs';

const MODES = [
  'resource-mismatch', 'issuer-mismatch', 'no-s256', 'token-garbage', 'token-huge',
  'token-slow', 'always-401', 'metadata-other-host', 'redirect-other-origin', 'cdn-wellknown',
  'call-401-once', 'no-iss',
];
const SLOW_TOTAL_MS = 10 * 60 * 1000;

function parseArgs(argv) {
  const options = { mode: undefined, port: 0, hugeBytes: 64 * 1024 * 1024, slowMs: 1000 };
  const integer = (i, min) => {
    const n = Number(argv[i]);
    if (i >= argv.length || !Number.isInteger(n) || n < min) throw new Error(`${argv[i - 1]}: an integer >= ${min}`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    switch (argv[i]) {
      case '--port': options.port = integer(++i, 0); break;
      case '--huge-bytes': options.hugeBytes = integer(++i, 1); break;
      case '--slow-ms': options.slowMs = integer(++i, 1); break;
      default:
        if (options.mode !== undefined || !MODES.includes(argv[i])) {
          throw new Error(`unknown argument ${argv[i]} (modes: ${MODES.join(', ')})`);
        }
        options.mode = argv[i];
    }
  }
  if (options.mode === undefined) throw new Error(`a mode is required: ${MODES.join(', ')}`);
  return options;
}

const options = parseArgsOrExit('hostile', parseArgs);
const mode = options.mode;
const report = {
  register: 0, authorize: 0, token: 0, mcp: 0, mcpWithValidToken: 0, toolCalls: 0, metadata: 0,
  otherOrigin: { requests: 0, withAuthorization: 0, paths: [] },
};
const site = {};  // origin, otherOrigin, resource, issuer: known once both listen
const codes = new Map();         // code -> {challenge, redirectUri}
const issuedTokens = new Set();  // access tokens this server issued

const token = () => randomBytes(24).toString('base64url');

function sendJson(res, status, value, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

function cdnRefusal(res, status) {
  res.writeHead(status, { 'content-type': 'text/html' });
  res.end(`<html><body><h1>${status}</h1><p>Request blocked by the edge.</p></body></html>`);
}

function protectedResourceMetadata(resource, authorizationServer) {
  return {
    resource, authorization_servers: [authorizationServer],
    scopes_supported: ['mcp:tools'], bearer_methods_supported: ['header'],
  };
}

function authorizationServerMetadata(origin, issuer) {
  return {
    issuer,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: mode === 'no-s256' ? ['plain'] : ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    authorization_response_iss_parameter_supported: mode !== 'no-iss',
    scopes_supported: ['mcp:tools'],
  };
}

// The metadata documents of the main origin, by path: what a CDN-fronted server has.
function mainWellKnown(pathname) {
  const prm = protectedResourceMetadata(
    mode === 'resource-mismatch' ? `${site.origin}/not-this-server` : site.resource, site.issuer);
  const asm = authorizationServerMetadata(site.origin,
    mode === 'issuer-mismatch' ? `${site.origin}/someone-else` : site.issuer);
  if (mode === 'cdn-wellknown') {
    return {
      '/.well-known/oauth-protected-resource/mcp': 403,
      '/.well-known/oauth-protected-resource': prm,
      '/.well-known/oauth-authorization-server/tenant': 403,
      '/.well-known/openid-configuration/tenant': 401,
      '/tenant/.well-known/openid-configuration': asm,
    }[pathname];
  }
  return {
    '/.well-known/oauth-protected-resource/mcp': prm,
    '/.well-known/oauth-authorization-server': asm,
    '/.well-known/openid-configuration': asm,
  }[pathname];
}

function register(body, res) {
  report.register += 1;
  let metadata = {};
  try {
    metadata = JSON.parse(body.toString('utf8'));
  } catch {
    sendJson(res, 400, { error: 'invalid_client_metadata' });
    return;
  }
  sendJson(res, 201, {
    ...metadata, client_id: `hostile-${token()}`, client_id_issued_at: Math.floor(Date.now() / 1000),
    token_endpoint_auth_method: 'none',
  });
}

function authorize(url, res) {
  report.authorize += 1;
  const params = url.searchParams;
  const redirect = URL.parse(params.get('redirect_uri') ?? '');
  if (!redirect) {
    sendJson(res, 400, { error: 'invalid_request' });
    return;
  }
  if (!params.get('code_challenge')) {
    redirect.searchParams.set('error', 'invalid_request');
  } else {
    const code = token();
    codes.set(code, { challenge: params.get('code_challenge'), redirectUri: params.get('redirect_uri') });
    redirect.searchParams.set('code', code);
  }
  if (params.has('state')) redirect.searchParams.set('state', params.get('state'));
  if (mode !== 'no-iss') redirect.searchParams.set('iss', site.issuer);
  res.writeHead(302, { location: redirect.href }).end();
}

function issueTokens(res) {
  const access = token();
  issuedTokens.add(access);
  sendJson(res, 200, {
    access_token: access, token_type: 'Bearer', expires_in: 3600, refresh_token: token(), scope: 'mcp:tools',
  }, { 'cache-control': 'no-store' });
}

async function trickle(res) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{');
  const until = Date.now() + SLOW_TOTAL_MS;
  while (!res.destroyed && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, options.slowMs));
    res.write(' ');
  }
  res.end();
}

async function hugeBody(res) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"token_type":"Bearer","access_token":"');
  const chunk = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < options.hugeBytes && !res.destroyed; sent += chunk.length) {
    if (!res.write(chunk)) await once(res, 'drain').catch(() => {});
  }
  res.end('"}');
}

async function tokenEndpoint(body, res) {
  report.token += 1;
  if (mode === 'token-garbage') {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Service Unavailable</body></html>');
    return;
  }
  if (mode === 'token-huge') return hugeBody(res);
  if (mode === 'token-slow') return trickle(res);
  const form = new URLSearchParams(body.toString('utf8'));
  if (form.get('grant_type') === 'refresh_token') return issueTokens(res);
  const issued = codes.get(form.get('code') ?? '');
  codes.delete(form.get('code') ?? '');
  const verifierHash = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
  if (!issued || issued.challenge !== verifierHash || issued.redirectUri !== form.get('redirect_uri')) {
    sendJson(res, 400, { error: 'invalid_grant' });
    return;
  }
  return issueTokens(res);
}

function buildMcpServer() {
  const server = new McpServer({ name: 'udon-oauth-hostile-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', {
    description: 'Echoes its text.',
    inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
  }, async ({ text }) => {
    report.toolCalls += 1;
    return { content: [{ type: 'text', text }] };
  });
  return server;
}
const mcpHandler = createMcpHandler(buildMcpServer, { legacy: 'stateless' });

function challenge() {
  if (mode === 'cdn-wellknown') return 'Bearer scope="mcp:tools"';
  const metadata = mode === 'metadata-other-host'
    ? `${site.otherOrigin}/.well-known/oauth-protected-resource/mcp`
    : `${site.origin}/.well-known/oauth-protected-resource/mcp`;
  return `Bearer resource_metadata="${metadata}", scope="mcp:tools"`;
}

const refuseNext = new Set();  // methods whose next request is answered 401

function methodOf(body) {
  try {
    return JSON.parse(body.toString('utf8')).method;
  } catch {
    return undefined;
  }
}

async function mcp(req, body, res) {
  report.mcp += 1;
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const valid = bearer !== undefined && issuedTokens.has(bearer);
  if (!valid || mode === 'always-401') {
    const error = bearer === undefined ? '' : 'error="invalid_token", ';
    res.writeHead(401, { 'www-authenticate': challenge().replace('Bearer ', `Bearer ${error}`) }).end();
    return;
  }
  const method = methodOf(body);
  if ((mode === 'call-401-once' && report.callRefused === undefined && method === 'tools/call') ||
      refuseNext.delete(method)) {
    if (method === 'tools/call') report.callRefused = true;
    issuedTokens.delete(bearer);
    res.writeHead(401, { 'www-authenticate': challenge().replace('Bearer ', 'Bearer error="invalid_token", ') }).end();
    return;
  }
  report.mcpWithValidToken += 1;
  if (mode === 'redirect-other-origin') {
    res.writeHead(307, { location: `${site.otherOrigin}/mcp` }).end();
    return;
  }
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  await writeWebResponse(await mcpHandler.fetch(toWebRequest(req, body, abort.signal)), res);
}

async function mainOrigin(req, res) {
  const url = new URL(req.url, site.origin);
  const body = await readBody(req);
  const known = req.method === 'GET' ? mainWellKnown(url.pathname) : undefined;
  if (typeof known === 'number') return cdnRefusal(res, known);
  if (known?.issuer !== undefined) report.metadata += 1;
  if (known) return sendJson(res, 200, known);
  if (url.pathname === '/_hostile/report') return sendJson(res, 200, report);
  if (url.pathname === '/_hostile/refuse-next') {
    refuseNext.add(url.searchParams.get('method'));
    return sendJson(res, 200, { armed: url.searchParams.get('method') });
  }
  if (url.pathname === '/register' && req.method === 'POST') return register(body, res);
  if (url.pathname === '/authorize' && req.method === 'GET') return authorize(url, res);
  if (url.pathname === '/token' && req.method === 'POST') return tokenEndpoint(body, res);
  if (url.pathname === '/mcp') return mcp(req, body, res);
  res.writeHead(404).end();
}

// The other origin: it claims the main resource as its own and counts what reaches it.
async function otherOrigin(req, res) {
  await readBody(req);
  const { pathname } = new URL(req.url, site.otherOrigin);
  report.otherOrigin.requests += 1;
  if (req.headers.authorization !== undefined) report.otherOrigin.withAuthorization += 1;
  if (report.otherOrigin.paths.length < 50) report.otherOrigin.paths.push(`${req.method} ${pathname}`);
  if (pathname.startsWith('/.well-known/oauth-protected-resource')) {
    return sendJson(res, 200, protectedResourceMetadata(site.resource, site.otherOrigin));
  }
  if (pathname === '/.well-known/oauth-authorization-server' || pathname === '/.well-known/openid-configuration') {
    return sendJson(res, 200, authorizationServerMetadata(site.otherOrigin, site.otherOrigin));
  }
  res.writeHead(404).end();
}

function serve(handler) {
  return http.createServer((req, res) => {
    handler(req, res).catch((error) => {
      process.stderr.write(`hostile: ${error.message}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
}

const main = serve(mainOrigin);
const other = serve(otherOrigin);
main.listen(options.port, '127.0.0.1');
other.listen(0, '127.0.0.1');
await Promise.all([once(main, 'listening'), once(other, 'listening')]);
site.origin = `http://127.0.0.1:${main.address().port}`;
site.otherOrigin = `http://127.0.0.1:${other.address().port}`;
site.resource = `${site.origin}/mcp`;
site.issuer = mode === 'cdn-wellknown' ? `${site.origin}/tenant` : site.origin;
stopOnSignals(main, other);
process.stdout.write(JSON.stringify({
  event: 'listening', mode, port: main.address().port, url: site.resource, resource: site.resource,
  issuer: site.issuer, otherOrigin: site.otherOrigin, report: `${site.origin}/_hostile/report`,
}) + '\n');
