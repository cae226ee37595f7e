// A tiny OTLP/HTTP JSON receiver (POST /v1/traces), so a test can read the spans a process exported.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  service?: string;
  attributes: Record<string, unknown>;
}

function value(v: Record<string, unknown> | undefined): unknown {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(value);
  return v;
}

function attributes(list: { key: string; value: Record<string, unknown> }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value: v }) => [key, value(v)]));
}

export interface OtlpReceiver {
  endpoint: string;
  spans: ReceivedSpan[];
  /** requests that were not OTLP JSON (a wrong protocol would show here) */
  rejected: number;
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const receiver = { spans, rejected: 0 } as OtlpReceiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        receiver.rejected += 1;
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = attributes(resourceSpans.resource?.attributes)['service.name'] as string | undefined;
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              service,
              attributes: attributes(span.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.waitFor = async (predicate, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(spans)) {
      if (Date.now() > deadline) throw new Error(`the spans did not arrive; got: ${spans.map((s) => s.name).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return spans;
  };
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
