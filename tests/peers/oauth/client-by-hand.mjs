// A minimal OAuth client written by hand, for the peers' own smoke test (smoke.mjs) and the
// C++ tests that need real tokens from authorization-server.mjs: dynamic registration, PKCE
// S256, state, the RFC 8707 resource, a loopback listener, login-driver.mjs as the browser.
//
// As a command (one JSON line on stdout; exit 0 on success, 1 otherwise):
//   node client-by-hand.mjs login ISSUER RESOURCE
//     -> {"tokenEndpoint":…,"clientId":…,"accessToken":…,"refreshToken":…}
//   node client-by-hand.mjs refresh TOKEN_ENDPOINT CLIENT_ID REFRESH_TOKEN
//     -> {"status":N,"error":…?,"accessToken":…?,"refreshToken":…?}
// These print tokens: test peers, talking to a throwaway authorization server.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

export function runScript(script, args) {
  const child = spawn(process.execPath, [path.join(here, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

// One request on 127.0.0.1, then closed: what a native client's redirect listener does.
export async function loopbackListener() {
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

export async function postForm(url, form) {
  const response = await fetch(url, {
    method: 'POST', body: new URLSearchParams(form),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  return { status: response.status, body: await response.json() };
}

const base64url = (bytes) => Buffer.from(bytes).toString('base64url');

export async function login(metadata, client, resource, redirectUri, listener) {
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

// A public native client, registered dynamically, with its loopback listener.
export async function registerClient(metadata) {
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

async function command(argv) {
  if (argv[0] === 'login' && argv.length === 3) {
    const [, issuer, resource] = argv;
    const metadata = await (await fetch(new URL('/.well-known/oauth-authorization-server', issuer))).json();
    const { client, listener, redirectUri } = await registerClient(metadata);
    const tokens = await login(metadata, client, resource, redirectUri, listener);
    return {
      tokenEndpoint: metadata.token_endpoint, clientId: client.client_id,
      accessToken: tokens.access_token, refreshToken: tokens.refresh_token,
    };
  }
  if (argv[0] === 'refresh' && argv.length === 4) {
    const [, tokenEndpoint, clientId, refreshToken] = argv;
    const answer = await postForm(tokenEndpoint, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    return {
      status: answer.status, error: answer.body.error,
      accessToken: answer.body.access_token, refreshToken: answer.body.refresh_token,
    };
  }
  throw new Error('usage: login ISSUER RESOURCE | refresh TOKEN_ENDPOINT CLIENT_ID REFRESH_TOKEN');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const out = await command(process.argv.slice(2));
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exitCode = out.status === undefined || out.status === 200 ? 0 : 1;
  } catch (error) {
    process.stderr.write(`client-by-hand: ${error.message}\n`);
    process.exitCode = 1;
  }
}
