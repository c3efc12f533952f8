// Test peer: the user at the browser, headless. Given an authorization URL of
// authorization-server.mjs, it follows the redirects with its own cookie jar, signs in on
// oidc-provider's login form, grants (or denies) on its consent form, and follows the final
// redirect to the client's loopback redirect URI, so that the client's listener receives the
// code exactly as it would from a browser.
//
// Usage:
//   node login-driver.mjs AUTHORIZATION_URL [--login NAME] [--deny] [--wrong-state]
//        [--wrong-iss] [--drop-iss] [--no-deliver] [--timeout-ms N]
//
//   --login NAME    the account to sign in as (default alice)
//   --deny          press "cancel" on the consent form: the redirect carries
//                   error=access_denied
//   --wrong-state   replace the redirect's state with another value before delivering it
//   --wrong-iss     replace the redirect's iss with another issuer before delivering it
//   --drop-iss      remove iss from the redirect before delivering it
//   --no-deliver    stop before the loopback redirect and print it (for a test that
//                   delivers it itself)
//   --timeout-ms N  bound on each HTTP request (default 10000)
//
// Prints one JSON line on stdout and exits 0 once the redirect was delivered:
//   {"delivered":true,"status":N,"redirect":{"origin":…,"path":…,"params":[names]}}
// (--no-deliver: "delivered":false and "location": the full redirect URL). The code and
// tokens are never printed when delivered. Exit 1 with a message on stderr when the login
// could not be completed (the authorization server refused, or no redirect came).
const MAX_STEPS = 20;

function parseArgs(argv) {
  const options = {
    url: undefined, login: 'alice', deny: false, wrongState: false, wrongIss: false,
    dropIss: false, deliver: true, timeoutMs: 10000,
  };
  for (let i = 0; i < argv.length; ++i) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--login': options.login = value(); break;
      case '--deny': options.deny = true; break;
      case '--wrong-state': options.wrongState = true; break;
      case '--wrong-iss': options.wrongIss = true; break;
      case '--drop-iss': options.dropIss = true; break;
      case '--no-deliver': options.deliver = false; break;
      case '--timeout-ms': options.timeoutMs = Number(value()); break;
      default:
        if (argv[i].startsWith('--') || options.url !== undefined) {
          throw new Error(`unknown argument ${argv[i]}`);
        }
        options.url = argv[i];
    }
  }
  if (options.url === undefined) throw new Error('an authorization URL is required');
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1) throw new Error('--timeout-ms: a positive integer');
  return options;
}

// A cookie jar for the authorization server's origin only (one origin in play).
class CookieJar {
  #cookies = new Map();
  store(response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.#cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  header() {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export async function request(jar, url, options, init = {}) {
  const headers = new Headers(init.headers);
  const cookies = jar.header();
  if (cookies) headers.set('cookie', cookies);
  const response = await fetch(url, {
    ...init, headers, redirect: 'manual', signal: AbortSignal.timeout(options.timeoutMs),
  });
  jar.store(response);
  return response;
}

function formSubmission(html, options) {
  const prompt = /name="prompt" value="(login|consent)"/.exec(html)?.[1];
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!prompt || !action) return undefined;
  if (prompt === 'consent' && options.deny) {
    const abort = /href="([^"]*\/abort)"/.exec(html)?.[1];
    return { method: 'GET', action: abort ?? `${action}/abort` };
  }
  const body = new URLSearchParams({ prompt });
  if (prompt === 'login') {
    body.set('login', options.login);
    body.set('password', 'any-password');
  }
  return { method: 'POST', action, body };
}

function tamper(location, options) {
  const url = new URL(location);
  if (options.wrongState) url.searchParams.set('state', 'tampered-state');
  if (options.wrongIss) url.searchParams.set('iss', 'http://127.0.0.1:1');
  if (options.dropIss) url.searchParams.delete('iss');
  return url;
}

// Follows the authorization server until it redirects away from its own origin; returns
// that redirect's URL.
async function walkToRedirect(options) {
  const jar = new CookieJar();
  const asOrigin = new URL(options.url).origin;
  let next = { method: 'GET', url: new URL(options.url) };
  for (let step = 0; step < MAX_STEPS; ++step) {
    const response = await request(jar, next.url, options, {
      method: next.method,
      ...(next.body ? { body: next.body, headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}),
    });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const target = new URL(location, next.url);
      if (target.origin !== asOrigin) return target;
      next = { method: 'GET', url: target };
      continue;
    }
    const html = await response.text();
    const form = response.ok ? formSubmission(html, options) : undefined;
    if (!form) {
      throw new Error(`the authorization server answered ${response.status} without a form or a redirect: ` +
        html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').slice(0, 300));
    }
    next = { method: form.method, url: new URL(form.action, next.url), body: form.body };
  }
  throw new Error(`no redirect to the client after ${MAX_STEPS} steps`);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const redirect = tamper(await walkToRedirect(options), options);
  if (!options.deliver) {
    process.stdout.write(JSON.stringify({ delivered: false, location: redirect.href }) + '\n');
    return;
  }
  const response = await fetch(redirect, { redirect: 'manual', signal: AbortSignal.timeout(options.timeoutMs) });
  await response.arrayBuffer().catch(() => {});
  process.stdout.write(JSON.stringify({
    delivered: true,
    status: response.status,
    redirect: { origin: redirect.origin, path: redirect.pathname, params: [...redirect.searchParams.keys()] },
  }) + '\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    process.stderr.write(`login-driver: ${error.message}\n`);
    process.exit(1);
  });
}
