// Interoperability peer: the official TypeScript SDK 2.x client (@modelcontextprotocol/client,
// pinned in tests/package.json) against an MCP server, at a chosen protocol era.
//
// Usage:
//   node sdk2_client.mjs [--era modern|auto|legacy] [--call NAME] [--arguments JSON]
//                        (--url URL | --stdio COMMAND [ARGS...])
//
//   --era modern   pin the 2026-07-28 revision (server/discover must offer it; no fallback)
//   --era auto     probe with server/discover, fall back to initialize on a legacy server
//   --era legacy   the plain 2025 initialize handshake (the SDK's default)
//   --call NAME    the tool to call after listing (default: the first listed tool)
//   --arguments J  its arguments as a JSON object (default {})
//   --url URL      Streamable HTTP endpoint
//   --stdio CMD    spawn CMD with the remaining arguments and talk over its stdio
//
// Prints one JSON line on stdout:
//   {"era":"modern"|"legacy","protocolVersion":...,"serverInfo":{...},
//    "supportedVersions":[...]|null (from server/discover),"tools":[names],
//    "call":{"ok":CallToolResult}|{"error":{"code":...,"message":...}}}
// and exits 0; a failure to connect or list prints {"error":{...}} and exits 1.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

function parseArgs(argv) {
  const options = { era: 'modern', call: undefined, arguments: {}, url: undefined, stdio: undefined };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--era') options.era = argv[++i];
    else if (arg === '--call') options.call = argv[++i];
    else if (arg === '--arguments') options.arguments = JSON.parse(argv[++i]);
    else if (arg === '--url') options.url = argv[++i];
    else if (arg === '--stdio') {
      options.stdio = argv.slice(i + 1);
      break;
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (!['modern', 'auto', 'legacy'].includes(options.era)) throw new Error('--era: modern, auto or legacy');
  if ((options.url === undefined) === (options.stdio === undefined || options.stdio.length === 0)) {
    throw new Error('exactly one of --url or --stdio COMMAND is required');
  }
  return options;
}

function describe(error) {
  return { code: error?.code ?? null, message: String(error?.message ?? error) };
}

const options = parseArgs(process.argv.slice(2));
const mode = options.era === 'modern' ? { pin: '2026-07-28' } : options.era;
const client = new Client(
  { name: 'udon-sdk2-interop', version: '1.0.0' },
  { versionNegotiation: { mode } },
);
const transport = options.url !== undefined
  ? new StreamableHTTPClientTransport(new URL(options.url))
  : new StdioClientTransport({ command: options.stdio[0], args: options.stdio.slice(1), stderr: 'ignore' });

let report;
let exitCode = 0;
try {
  await client.connect(transport, { timeout: 30000 });
  const listed = await client.listTools();
  const tools = listed.tools.map((tool) => tool.name);
  const name = options.call ?? tools[0];
  let call;
  try {
    call = { ok: await client.callTool({ name, arguments: options.arguments }) };
  } catch (error) {
    call = { error: describe(error) };
  }
  const protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  report = {
    era: client.getProtocolEra() ?? null,
    protocolVersion,
    serverInfo: client.getServerVersion() ?? null,
    supportedVersions: client.getDiscoverResult()?.supportedVersions ?? null,
    tools,
    call,
  };
} catch (error) {
  report = { error: describe(error) };
  exitCode = 1;
}
try {
  await client.close();
} catch {
  // already closed
}
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(exitCode);
