// Test peer: a real OAuth 2.1 / OpenID Connect authorization server (oidc-provider, pinned in
// tests/package.json) on 127.0.0.1, configured the way MCP's authorization sections expect:
// dynamic client registration (RFC 7591), PKCE with S256 only and always required,
// resource indicators (RFC 8707) issuing JWT access tokens whose audience is the resource,
// refresh tokens rotated on every use, revocation (RFC 7009), `iss` in the authorization
// response (RFC 9207). Its interactive login is oidc-provider's development interaction
// (a login form, then a consent form), driven headlessly by login-driver.mjs.
//
// Usage:
//   node authorization-server.mjs [--port N] [--access-token-ttl S] [--refresh-token-ttl S]
//        [--resource URL]... [--no-registration] [--no-rotation]
//        [--client-id ID [--client-secret SECRET] [--redirect-port P] [--redirect-path PATH]]
//        [--cimd [--cimd-fetch-from PREFIX=BASE]...]
//
//   --port               listen port (default 0: a free one)
//   --access-token-ttl   access token lifetime in seconds (default 3600; 1-5 to test refresh)
//   --refresh-token-ttl  refresh token lifetime in seconds (default 86400)
//   --resource URL       a protected resource this server issues tokens for (repeatable);
//                        without any, every http(s) URL on a loopback host is accepted
//   --no-registration    no dynamic registration (servers such as GitHub or Slack)
//   --no-rotation        keep refresh tokens across refreshes (default: rotate every time)
//   --client-id ...      a client registered by hand: id, optional secret (then it
//                        authenticates with client_secret_basic or client_secret_post, else
//                        it is public), loopback redirect http://127.0.0.1:P/PATH (default
//                        port 0 = any port, path /callback)
//   --cimd               Client ID Metadata Documents (oidc-provider's experimental
//                        clientIdMetadataDocument, draft-02): a client_id that is an https
//                        URL is fetched as the client's metadata. Draft-02 demands https
//                        and oidc-provider refuses loopback addresses, so a test maps the
//                        URL onto a local server with --cimd-fetch-from
//                        https://client.example/=http://127.0.0.1:PORT/ (a prefix swap).
//
// Scopes of the resource: "mcp:tools" (the default grant) and "mcp:admin" (resource-server's
// admin tool needs it). The test account is any login name; the driver uses "alice".
//
// Prints one JSON line {"issuer":"http://127.0.0.1:N","port":N} on stdout once it accepts
// connections; diagnostics go to stderr. Exits on SIGTERM or SIGINT.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { parseArgsOrExit, stopOnSignals } from '../http-bridge.mjs';

const RESOURCE_SCOPES = 'mcp:tools mcp:admin';

function parseArgs(argv) {
  const options = {
    port: 0, accessTokenTtl: 3600, refreshTokenTtl: 86400, resources: [],
    registration: true, rotation: true, clientId: undefined, clientSecret: undefined,
    redirectPort: 0, redirectPath: '/callback', cimd: false, cimdFetchFrom: [],
  };
  const value = (i) => {
    if (i >= argv.length) throw new Error(`${argv[i - 1]} needs a value`);
    return argv[i];
  };
  const integer = (text, name, min) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name}: an integer >= ${min}`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    switch (argv[i]) {
      case '--port': options.port = integer(value(++i), '--port', 0); break;
      case '--access-token-ttl': options.accessTokenTtl = integer(value(++i), '--access-token-ttl', 1); break;
      case '--refresh-token-ttl': options.refreshTokenTtl = integer(value(++i), '--refresh-token-ttl', 1); break;
      case '--resource': options.resources.push(value(++i)); break;
      case '--no-registration': options.registration = false; break;
      case '--no-rotation': options.rotation = false; break;
      case '--client-id': options.clientId = value(++i); break;
      case '--client-secret': options.clientSecret = value(++i); break;
      case '--redirect-port': options.redirectPort = integer(value(++i), '--redirect-port', 0); break;
      case '--redirect-path': options.redirectPath = value(++i); break;
      case '--cimd': options.cimd = true; break;
      case '--cimd-fetch-from': {
        const [from, to] = value(++i).split('=');
        if (!from || !to) throw new Error('--cimd-fetch-from: PREFIX=BASE');
        options.cimdFetchFrom.push({ from, to });
        break;
      }
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (options.port > 65535 || options.redirectPort > 65535) throw new Error('ports: 0-65535');
  if (options.clientSecret !== undefined && options.clientId === undefined) {
    throw new Error('--client-secret needs --client-id');
  }
  return options;
}

const options = parseArgsOrExit('authorization-server', parseArgs);

function isLoopbackHttpUrl(text) {
  const url = URL.parse(text);
  return url !== null && ['http:', 'https:'].includes(url.protocol) &&
    ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) && url.hash === '';
}

function resourceAccepted(indicator) {
  if (options.resources.length > 0) return options.resources.includes(indicator);
  return isLoopbackHttpUrl(indicator);
}

// The manual client, as a real operator would register it: a loopback redirect URI (native
// application: any port matches when none was fixed, RFC 8252 7.3).
function manualClients() {
  if (options.clientId === undefined) return [];
  const port = options.redirectPort === 0 ? '' : `:${options.redirectPort}`;
  return [{
    client_id: options.clientId,
    ...(options.clientSecret !== undefined ? { client_secret: options.clientSecret } : {}),
    application_type: 'native',
    redirect_uris: [`http://127.0.0.1${port}${options.redirectPath}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: options.clientSecret !== undefined ? 'client_secret_basic' : 'none',
  }];
}

// oidc-provider fetches metadata documents with its own fetch; a test has no trusted https
// origin, so the documents' URLs are mapped onto a loopback server here (and only here).
function fetchWithPrefixSwap(url, fetchOptions) {
  const text = String(url);
  for (const { from, to } of options.cimdFetchFrom) {
    if (text.startsWith(from)) {
      const { dispatcher, ...rest } = fetchOptions;  // its SSRF guard refuses loopback
      return globalThis.fetch(to + text.slice(from.length), rest);
    }
  }
  return globalThis.fetch(url, fetchOptions);
}

async function signingKeys() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { keys: [{ ...jwk, alg: 'RS256', use: 'sig', kid: randomBytes(8).toString('hex') }] };
}

async function configuration() {
  return {
    clients: manualClients(),
    jwks: await signingKeys(),
    cookies: { keys: [randomBytes(32).toString('hex')] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // The resource's scopes are listed too: dynamic registration checks a client's `scope`
    // against this list (mcp-remote registers with one).
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES.split(' ')],
    pkce: { required: () => true },
    rotateRefreshToken: () => options.rotation,
    // Every client allowed the refresh_token grant gets one (not only with offline_access).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: options.accessTokenTtl,
      RefreshToken: options.refreshTokenTtl,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: options.refreshTokenTtl,
    },
    fetch: fetchWithPrefixSwap,
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: options.registration },
      revocation: { enabled: true },
      clientIdMetadataDocument: options.cimd
        ? { enabled: true, ack: 'draft-02' } : { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (!resourceAccepted(indicator)) throw new errors.InvalidTarget();
          return {
            scope: RESOURCE_SCOPES,
            audience: indicator,
            accessTokenTTL: options.accessTokenTtl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  };
}

// Listen first: the issuer carries the port the kernel picked.
const server = http.createServer((_req, res) => res.writeHead(503).end());
server.listen(options.port, '127.0.0.1', async () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  try {
    const provider = new Provider(issuer, await configuration());
    provider.on('server_error', (_ctx, error) => {
      process.stderr.write(`authorization-server: ${error.message}\n`);
    });
    server.removeAllListeners('request');
    server.on('request', provider.callback());
  } catch (error) {
    process.stderr.write(`authorization-server: ${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify({ issuer, port }) + '\n');
});

stopOnSignals(server);
