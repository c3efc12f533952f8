// The peers' own smoke test (CTest oauth_peers_smoke): starts authorization-server.mjs and
// resource-server.mjs, plays a minimal OAuth client by hand (dynamic registration, PKCE S256,
// state, RFC 8707 resource, a loopback listener), lets login-driver.mjs do the browser's
// part, checks `iss` and `state`, exchanges the code, lists the tools with the token through
// the TypeScript SDK client, and checks the refresh token rotates and the 401/403 challenges;
// then mcp-remote logs in to the same server (mcp-remote-anchor.mjs), and two hostile.mjs
// modes are checked.
// Exits 0 when every check holds; otherwise prints the failed check and exits 1.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const children = [];

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

// Starts a peer and resolves with its first stdout line, parsed.
export function startPeer(script, args) {
  const child = spawn(process.execPath, [path.join(here, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(stdout.slice(0, newline)));
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}: ${stderr}`)));
  });
}

function runScript(script, args) {
  const child = spawn(process.execPath, [path.join(here, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

// One request on 127.0.0.1, then closed: what a native client's redirect listener does.
async function loopbackListener() {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  const received = new Promise((resolve) => {
    server.once('request', (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
      server.close();
      resolve(new URL(req.url, `http://127.0.0.1:${port}`));
    });
  });
  return { port, received };
}

async function postForm(url, form) {
  const response = await fetch(url, {
    method: 'POST', body: new URLSearchParams(form),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  return { status: response.status, body: await response.json() };
}

const base64url = (bytes) => Buffer.from(bytes).toString('base64url');

async function login(metadata, client, resource, redirectUri, listener) {
  const verifier = base64url(randomBytes(32));
  const state = base64url(randomBytes(16));
  const authorize = new URL(metadata.authorization_endpoint);
  authorize.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri,
    scope: 'mcp:tools', state, resource,
    code_challenge: base64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
  }).toString();
  const driver = await runScript('login-driver.mjs', [authorize.href]);
  check(driver.code === 0, `login driver exit 0 (${driver.stderr.trim()})`);
  const redirect = await listener.received;
  check(redirect.searchParams.get('state') === state, 'state comes back unchanged');
  check(redirect.searchParams.get('iss') === metadata.issuer, 'iss (RFC 9207) is the issuer');
  const code = redirect.searchParams.get('code');
  check(code, 'the redirect carries a code');
  const tokens = await postForm(metadata.token_endpoint, {
    grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: client.client_id,
    code_verifier: verifier, resource,
  });
  check(tokens.status === 200, `token endpoint 200 (${JSON.stringify(tokens.body.error ?? '')})`);
  return tokens.body;
}

async function listTools(url, accessToken) {
  const client = new Client({ name: 'oauth-peers-smoke', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
  });
  await client.connect(transport);
  const { tools } = await client.listTools();
  await client.close();
  return tools.map((tool) => tool.name).sort();
}

async function mcpPost(url, accessToken, message) {
  return fetch(url, {
    method: 'POST', redirect: 'manual',
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
    },
    body: JSON.stringify(message),
  });
}

async function checkChallenges(rs, accessToken) {
  const anonymous = await mcpPost(rs.url, undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  check(anonymous.status === 401, 'no token: 401');
  check(/resource_metadata="[^"]+"/.test(anonymous.headers.get('www-authenticate') ?? ''), '401 names resource_metadata');
  const admin = await mcpPost(rs.url, accessToken, {
    jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'admin_reset', arguments: {} },
  });
  check(admin.status === 403, 'admin tool without mcp:admin: 403');
  check(/error="insufficient_scope"/.test(admin.headers.get('www-authenticate') ?? ''), '403 says insufficient_scope');
}

async function checkRotation(metadata, client, refreshToken, resource) {
  const first = await postForm(metadata.token_endpoint, {
    grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.client_id, resource,
  });
  check(first.status === 200, 'refresh 200');
  check(first.body.refresh_token && first.body.refresh_token !== refreshToken, 'refresh token rotated');
  const again = await postForm(metadata.token_endpoint, {
    grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.client_id,
  });
  check(again.status === 400 && again.body.error === 'invalid_grant', 'a spent refresh token is refused (invalid_grant)');
  return first.body.access_token;
}

// A public native client, registered dynamically, with its loopback listener.
async function registerClient(metadata) {
  const listener = await loopbackListener();
  const redirectUri = `http://127.0.0.1:${listener.port}/callback`;
  const registration = await fetch(metadata.registration_endpoint, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'], client_name: 'oauth-peers-smoke',
    }),
  });
  check(registration.status === 201, 'dynamic registration 201');
  return { client: await registration.json(), listener, redirectUri };
}

// hostile.mjs: the CDN fallback mode logs in and lists tools; the redirect mode sends a
// request with a valid token across origins.
async function checkHostile() {
  const cdn = await startPeer('hostile.mjs', ['cdn-wellknown']);
  const refused = await fetch(new URL('/.well-known/oauth-authorization-server/tenant', cdn.url));
  check(refused.status === 403, 'cdn-wellknown: 403 where a 404 was expected');
  const cdnMetadata = await (await fetch(new URL('/tenant/.well-known/openid-configuration', cdn.url))).json();
  check(cdnMetadata.issuer === cdn.issuer, 'cdn-wellknown: path-appended OpenID configuration');
  const registered = await registerClient(cdnMetadata);
  const tokens = await login(cdnMetadata, registered.client, cdn.resource, registered.redirectUri, registered.listener);
  check(JSON.stringify(await listTools(cdn.url, tokens.access_token)) === '["echo"]', 'cdn-wellknown: tools/list');
  const redirect = await startPeer('hostile.mjs', ['redirect-other-origin']);
  const metadata = await (await fetch(new URL('/.well-known/oauth-authorization-server', redirect.url))).json();
  const other = await registerClient(metadata);
  const otherTokens = await login(metadata, other.client, redirect.resource, other.redirectUri, other.listener);
  const moved = await mcpPost(redirect.url, otherTokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  check(moved.status === 307 && moved.headers.get('location').startsWith(redirect.otherOrigin), 'redirect-other-origin: 307 away');
}

async function main() {
  const as = await startPeer('authorization-server.mjs', ['--access-token-ttl', '300']);
  const rs = await startPeer('resource-server.mjs', ['--issuer', as.issuer]);
  const prm = await (await fetch(new URL(`/.well-known/oauth-protected-resource/mcp`, rs.url))).json();
  check(prm.resource === rs.resource && prm.authorization_servers[0] === as.issuer, 'protected resource metadata');
  const metadata = await (await fetch(new URL('/.well-known/oauth-authorization-server', as.issuer))).json();
  check(metadata.issuer === as.issuer, 'issuer equals the URL it was fetched for');
  check(metadata.code_challenge_methods_supported.includes('S256'), 'S256 listed');
  const { client, listener, redirectUri } = await registerClient(metadata);
  const tokens = await login(metadata, client, rs.resource, redirectUri, listener);
  check(tokens.refresh_token, 'a refresh token');
  const names = await listTools(rs.url, tokens.access_token);
  check(JSON.stringify(names) === JSON.stringify(['add', 'admin_reset', 'echo', 'whoami']), `tools/list: ${names}`);
  await checkChallenges(rs, tokens.access_token);
  const refreshed = await checkRotation(metadata, client, tokens.refresh_token, rs.resource);
  check((await listTools(rs.url, refreshed)).length === 4, 'tools/list with the refreshed token');
  const anchor = await runScript('mcp-remote-anchor.mjs', [rs.url]);
  check(anchor.code === 0 && JSON.parse(anchor.stdout).tools.length === 4, `mcp-remote logs in and lists the tools (${anchor.stderr.slice(-500)})`);
  await checkHostile();
  process.stdout.write('oauth peers smoke: ok\n');
}

try {
  await main();
  process.exitCode = 0;
} catch (error) {
  process.stderr.write(`oauth peers smoke: ${error.message}\n`);
  process.exitCode = 1;
} finally {
  for (const child of children) child.kill('SIGTERM');
}
