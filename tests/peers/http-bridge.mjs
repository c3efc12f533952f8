// Helpers the Node test peers share: Node's http request and response as the web-standard
// Request and Response the MCP SDK's HTTP entry takes and gives, and the command-line
// parsing prologue every peer has.

// Parses the command line with parse(argv), or prints why not on stderr and exits 2.
export function parseArgsOrExit(peerName, parse) {
  try {
    return parse(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${peerName}: ${error.message}\n`);
    process.exit(2);
  }
}

export async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

// Node's http request (its body already read) -> a web-standard Request.
export function toWebRequest(req, body, signal) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = !['GET', 'HEAD'].includes(req.method);
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
    method: req.method, headers, body: hasBody ? body : undefined, signal,
  });
}

// A web-standard Response -> Node's http response, streamed (SSE bodies included).
export async function writeWebResponse(response, res) {
  const headers = {};
  response.headers.forEach((value, name) => { headers[name] = value; });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => { reader.cancel().catch(() => {}); });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve));
    }
  } catch {
    // the client went away
  }
  res.end();
}

// Closes the servers and exits 0 on SIGTERM or SIGINT.
export function stopOnSignals(...servers) {
  const stop = () => {
    for (const server of servers) {
      server.close();
      server.closeAllConnections();
    }
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
