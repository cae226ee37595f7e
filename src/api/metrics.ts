// GET /metrics (Prometheus text) and the request-side metrics: turns by agent, kind and outcome, their
// latency, and connected event streams. The agent comes from the conversation (noteConversation), never
// from the route. The Temporal SDK's own metrics (its Runtime's Prometheus exporter) are appended.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { metrics, registry } from '../telemetry/metrics.ts';
import { annotateActiveSpan } from '../telemetry/tracing.ts';
import { turnAttributes } from '../telemetry/turn-context.ts';

let sdkMetricsUrl: string | undefined;

/** Where the Temporal Runtime serves its Prometheus metrics (set by the worker when metrics are on). */
export function setSdkMetricsUrl(url: string | undefined): void {
  sdkMetricsUrl = url;
}

async function sdkMetrics(): Promise<string> {
  if (!sdkMetricsUrl) return '';
  try {
    const response = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) });
    return response.ok ? await response.text() : '';
  } catch {
    return `# the Temporal SDK's metrics at ${sdkMetricsUrl} did not answer\n`;
  }
}

export async function metricsText(): Promise<string> {
  const [own, sdk] = await Promise.all([registry.metrics(), sdkMetrics()]);
  return sdk ? `${own}\n${sdk}` : own;
}

export function metricsHandler() {
  return async (_req: Request, res: Response) => {
    res.setHeader('Content-Type', registry.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(await metricsText());
  };
}

/** A listener of its own for GET /metrics (METRICS_PORT), for a worker without an API, or a private port. */
export async function serveMetrics(port: number, host: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metricsText().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export function metricsPort(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}

interface TurnNote {
  conversationId: string;
  agent: string;
  userId: string;
}

/** Called once a route knows which conversation a request is about: the span's attributes and the metrics' agent. */
export function noteConversation(res: Response, turn: TurnNote): void {
  res.locals.brigadeTurn = turn;
  annotateActiveSpan(turnAttributes(turn));
}

const TURN_ROUTE = /^\/v1\/conversations\/[^/]+\/(messages|decisions)$/;
const EVENTS_ROUTE = /^\/v1\/conversations\/[^/]+\/events$/;

/** Counts turns and event streams; cheap enough to run whether /metrics is served or not. */
export function requestMetrics() {
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    // the HTTP server span gets the route that answered (low-cardinality name: POST /v1/conversations/:id/messages)
    const span = trace.getSpan(context.active());
    if (span?.isRecording()) {
      res.on('finish', () => {
        const route = req.route?.path;
        if (typeof route !== 'string') return;
        const full = `${req.baseUrl}${route}`;
        span.setAttribute('http.route', full);
        span.updateName(`${req.method} ${full}`);
      });
    }
    const turn = req.method === 'POST' ? TURN_ROUTE.exec(path) : null;
    if (turn) {
      const kind = turn[1] === 'messages' ? 'message' : 'decision';
      const started = performance.now();
      let waiting = false;
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        waiting =
          Array.isArray((body as { pending?: unknown[] } | undefined)?.pending) && (body as { pending: unknown[] }).pending.length > 0;
        return json(body);
      };
      let counted = false;
      const count = (aborted: boolean) => {
        if (counted) return;
        counted = true;
        const agent = (res.locals.brigadeTurn as TurnNote | undefined)?.agent ?? 'unknown';
        const outcome = aborted
          ? 'aborted'
          : res.statusCode >= 500
            ? 'error'
            : res.statusCode >= 400
              ? 'rejected'
              : waiting
                ? 'waiting'
                : 'ok';
        const labels = { agent, kind, outcome };
        metrics.turns.inc(labels);
        metrics.turnSeconds.observe(labels, (performance.now() - started) / 1000);
      };
      res.on('finish', () => count(false));
      res.on('close', () => count(!res.writableFinished));
    } else if (req.method === 'GET' && EVENTS_ROUTE.test(path)) {
      let open = false;
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
      (res as { writeHead: unknown }).writeHead = (...args: unknown[]) => {
        const headers = args.find((arg) => arg && typeof arg === 'object') as Record<string, unknown> | undefined;
        const type = String(headers?.['Content-Type'] ?? headers?.['content-type'] ?? res.getHeader('content-type') ?? '');
        if (!open && args[0] === 200 && type.startsWith('text/event-stream')) {
          open = true;
          metrics.sseClients.inc();
        }
        return writeHead(...args);
      };
      res.on('close', () => {
        if (open) metrics.sseClients.dec();
        open = false;
      });
    }
    next();
  };
}
