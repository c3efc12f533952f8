// Test peer: the anchor of issue 39. mcp-remote (pinned in tests/package.json), the login
// most hosts use today, logs in to a server through login-driver.mjs and lists its tools, so
// that a test can assert "where mcp-remote succeeds, udon-mcp succeeds".
//
// Usage:
//   node mcp-remote-anchor.mjs SERVER_URL [--config-dir DIR] [--timeout-ms N]
//        [-- MCP_REMOTE_ARGS...]
//
//   --config-dir   mcp-remote's credential directory (MCP_REMOTE_CONFIG_DIR); default a fresh
//                  temporary one, removed at the end. Give one to test a second run that
//                  reuses (and refreshes) the stored login.
//   --timeout-ms   bound on the whole run (default 60000)
//   -- ...         extra arguments for mcp-remote-client (for example --static-oauth-client-info)
//
// mcp-remote-client prints the authorization URL on stderr and tries to open a browser; the
// PATH given to it has an xdg-open that does nothing, and this script hands the URL to
// login-driver.mjs instead. Prints one JSON line on stdout:
//   {"ok":true|false,"loggedIn":true|false,"tools":["…"],"exitCode":N}
// and exits 0 when mcp-remote listed the tools, 1 otherwise (its stderr then follows on
// stderr; mcp-remote does not print tokens there).
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const clientScript = path.join(path.dirname(require.resolve('mcp-remote/package.json')), 'dist', 'client.js');

function parseArgs(argv) {
  const options = { url: undefined, configDir: undefined, timeoutMs: 60000, extra: [] };
  for (let i = 0; i < argv.length; ++i) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    if (argv[i] === '--') {
      options.extra = argv.slice(i + 1);
      break;
    }
    switch (argv[i]) {
      case '--config-dir': options.configDir = value(); break;
      case '--timeout-ms': options.timeoutMs = Number(value()); break;
      default:
        if (argv[i].startsWith('--') || options.url !== undefined) throw new Error(`unknown argument ${argv[i]}`);
        options.url = argv[i];
    }
  }
  if (options.url === undefined) throw new Error('a server URL is required');
  return options;
}

// A directory with an xdg-open that does nothing, first on mcp-remote's PATH.
function quietOpenerDir(scratch) {
  const bin = path.join(scratch, 'bin');
  const opener = path.join(bin, 'xdg-open');
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin);
  writeFileSync(opener, '#!/bin/sh\nexit 0\n');
  chmodSync(opener, 0o755);
  return bin;
}

function runDriver(url) {
  const driver = spawn(process.execPath, [path.join(here, 'login-driver.mjs'), url], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve) => driver.on('exit', (code) => resolve(code === 0)));
}

// The tool names out of mcp-remote-client's "Tools: {…}" log (pretty-printed JSON).
function toolNames(stderr) {
  const start = stderr.indexOf('Tools: {');
  if (start < 0) return undefined;
  const end = stderr.indexOf('\n}', start);
  if (end < 0) return undefined;
  try {
    return JSON.parse(stderr.slice(start + 'Tools: '.length, end + 2)).tools.map((tool) => tool.name).sort();
  } catch {
    return undefined;
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'udon-mcp-remote-'));
  const configDir = options.configDir ?? path.join(scratch, 'auth');
  const child = spawn(process.execPath, [clientScript, options.url, ...options.extra], {
    stdio: ['pipe', 'ignore', 'pipe'],  // stdin open: mcp-remote stops when it ends
    env: {
      ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true',
      PATH: `${quietOpenerDir(scratch)}:${path.dirname(process.execPath)}:${process.env.PATH}`,
    },
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  let stderr = '';
  let login;
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    const url = /Please authorize this client by visiting:\s*\n(\S+)/.exec(stderr)?.[1];
    if (url && login === undefined) login = runDriver(url);
  });
  const exitCode = await new Promise((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  clearTimeout(timer);
  const loggedIn = login === undefined ? false : await login;
  const tools = toolNames(stderr);
  const ok = exitCode === 0 && tools !== undefined;
  process.stdout.write(JSON.stringify({ ok, loggedIn, tools: tools ?? [], exitCode }) + '\n');
  if (!ok) process.stderr.write(stderr);
  rmSync(scratch, { recursive: true, force: true });
  process.exitCode = ok ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`mcp-remote-anchor: ${error.message}\n`);
  process.exit(2);
});
