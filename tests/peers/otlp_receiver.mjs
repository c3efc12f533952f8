// A real OTLP/HTTP (JSON) trace receiver for udon-mcp's telemetry test, checked by
// OpenTelemetry's own code: every span that arrives is rebuilt as an SDK ReadableSpan and
// encoded again by @opentelemetry/otlp-transformer (JsonTraceSerializer, and
// ProtobufTraceSerializer to prove it encodes as protobuf too); the request is accepted only
// when what udon-mcp sent equals OpenTelemetry's encoding field for field and carries no
// field OpenTelemetry's does not. Each accepted span is appended as one JSON line to FILE;
// a refused request writes {"error": ...} and is answered 400.
//   node otlp_receiver.mjs FILE    -> prints "listening PORT"
import { createServer } from 'node:http';
import { appendFileSync } from 'node:fs';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { TraceState } from '@opentelemetry/core';

const out = process.argv[2];

function anyValue(value) {
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  throw new Error('unexpected attribute value ' + JSON.stringify(value));
}

function hrTime(nanos) {
  const n = BigInt(nanos);
  return [Number(n / 1000000000n), Number(n % 1000000000n)];
}

function attributes(list) {
  const result = {};
  for (const { key, value } of list) result[key] = anyValue(value);
  return result;
}

// The SDK's view of a span udon-mcp sent.
function readableSpan(span, resource, scope) {
  return {
    name: span.name,
    kind: span.kind - 1,
    spanContext: () => ({
      traceId: span.traceId,
      spanId: span.spanId,
      traceFlags: 1,
      traceState: span.traceState ? new TraceState(span.traceState) : undefined,
    }),
    parentSpanContext: span.parentSpanId ? { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: 1 } : undefined,
    startTime: hrTime(span.startTimeUnixNano),
    endTime: hrTime(span.endTimeUnixNano),
    attributes: attributes(span.attributes),
    status: { code: span.status?.code ?? 0 },
    events: [],
    links: [],
    duration: [0, 0],
    ended: true,
    resource: { attributes: attributes(resource.attributes), schemaUrl: undefined },
    instrumentationScope: { name: scope.name, version: scope.version },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

const normal = (value) => JSON.parse(JSON.stringify(value, (k, v) => (k === 'intValue' ? String(v) : v)));

// Every member udon-mcp sent must be one OpenTelemetry's encoding has, with the same value.
function sameAsOpenTelemetry(sent, theirs, path) {
  if (typeof sent !== 'object' || sent === null) {
    if (sent !== theirs) throw new Error(`${path}: sent ${JSON.stringify(sent)}, OpenTelemetry encodes ${JSON.stringify(theirs)}`);
    return;
  }
  for (const key of Object.keys(sent)) {
    if (!(key in (theirs ?? {}))) throw new Error(`${path}/${key}: no such OTLP field`);
    sameAsOpenTelemetry(sent[key], theirs[key], `${path}/${key}`);
  }
}

function check(request) {
  const spans = [];
  for (const rs of request.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) spans.push({ span, sdk: readableSpan(span, rs.resource, ss.scope) });
    }
  }
  const theirs = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans.map((s) => s.sdk))));
  const encoded = theirs.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
  spans.forEach(({ span }, i) => sameAsOpenTelemetry(normal(span), normal(encoded[i]), `/spans/${i}`));
  sameAsOpenTelemetry(normal(request.resourceSpans[0].resource), normal(theirs.resourceSpans[0].resource), '/resource');
  if (ProtobufTraceSerializer.serializeRequest(spans.map((s) => s.sdk)).length === 0) throw new Error('empty protobuf');
  return spans.map((s) => s.span);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`${req.method} ${req.url}`);
      if (!String(req.headers['content-type']).startsWith('application/json')) throw new Error('content-type');
      const spans = check(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      for (const span of spans) appendFileSync(out, JSON.stringify(span) + '\n');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    } catch (error) {
      appendFileSync(out, JSON.stringify({ error: String(error.message) }) + '\n');
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: String(error.message) }));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
