// OpenTelemetry tracing for one process (API, worker or both), configured only by the standard OTEL_*
// variables. With no exporter endpoint set nothing is installed: the global tracer stays the API's no-op,
// no instrumentation patches anything, and the Temporal interceptors are left out (see temporal.ts).
//
// One turn is one trace: the HTTP request (http instrumentation; the route is named by api/metrics.ts, as
// @opentelemetry/instrumentation-express supports Express 5 only in the OTel 2.x line, while
// @temporalio/interceptors-opentelemetry 1.24 is on 1.x), the Temporal client call
// (the client interceptor puts the context in the Update's headers), the workflow's Update and activity
// scheduling (workflow-interceptors.ts, exported through a sink), the activities (activity interceptor),
// the model span (model.ts, GenAI conventions), Gemini's and OpenBreweryDB's HTTP calls (undici: fetch)
// and the PostgreSQL queries (pg).
import { createRequire } from 'node:module';
import { context, trace, type Span, type Tracer } from '@opentelemetry/api';
// Types only: the SDK, the exporters and the instrumentations load when tracing is switched on, so a process
// without OTEL_* settings does not even read them.
import type * as Http from '@opentelemetry/instrumentation-http';
import type * as Pg from '@opentelemetry/instrumentation-pg';
import type * as Undici from '@opentelemetry/instrumentation-undici';
import type * as Instrumentation from '@opentelemetry/instrumentation';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtlpProto from '@opentelemetry/exporter-trace-otlp-proto';
import type * as Resources from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type * as TraceNode from '@opentelemetry/sdk-trace-node';

const require = createRequire(import.meta.url);

export const TRACER_NAME = 'brigade';

export interface Tracing {
  enabled: boolean;
  /** the processor the workflow span sink feeds (Temporal workflow spans are made in the sandbox) */
  spanProcessor?: SpanProcessor;
  resource?: Resource;
  /** exports what is buffered (tests, shutdown) */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

let current: Tracing | undefined;

const OFF: Tracing = { enabled: false, flush: async () => undefined, shutdown: async () => undefined };

export class TracingConfigError extends Error {
  override name = 'TracingConfigError';
}

/** Whether the environment asks for traces: an OTLP endpoint, and the SDK not switched off. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (/^true$/i.test(env.OTEL_SDK_DISABLED ?? '')) return false;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/**
 * Installs tracing once per process (later calls return the first result). Call it before the app makes
 * its first pg client or HTTP server: instrumentations patch pg's and http's prototypes in place.
 */
export function initTracing(env: NodeJS.ProcessEnv = process.env): Tracing {
  if (current) return current;
  if (!tracingRequested(env)) return (current = OFF);

  const { Resource } = require('@opentelemetry/resources') as typeof Resources;
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof TraceBase;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof TraceNode;
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof Instrumentation;
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof Http;
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof Undici;
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof Pg;

  const exporter = makeExporter(env);
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME || 'brigade' });
  // the sampler (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG) and batch sizes (OTEL_BSP_*) come from the environment
  const spanProcessor = new BatchSpanProcessor(exporter);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();

  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        // health probes and scrapes are not turns; they would drown the traces that matter (and an OTLP
        // receiver in the same process, as in the tests, would trace its own exports); the sign-in's callback
        // has the provider's authorization code in its query, which a span's URL attribute would keep
        ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz|metrics|v1\/traces|auth\/callback)\b/.test(req.url ?? ''),
      }),
      // fetch: Gemini (@google/genai) and OpenBreweryDB
      new UndiciInstrumentation(),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  // The app imports these CommonJS packages from ESM, which skips require hooks; requiring them once here
  // runs the hooks, which patch the shared prototypes that the ESM imports see too.
  for (const name of ['http', 'https', 'pg', 'pg-pool']) {
    try {
      require(name);
    } catch {
      // not installed in this layout; its spans are simply missing
    }
  }

  current = {
    enabled: true,
    spanProcessor,
    resource,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return current;
}

function makeExporter(env: NodeJS.ProcessEnv): SpanExporter {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  // The exporters read headers, timeout and compression from OTEL_EXPORTER_OTLP_* themselves; the endpoint is
  // given, so that the environment passed in (tests) is the one used.
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${base}/v1/traces`;
  if (protocol === 'http/json')
    return new (require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp).OTLPTraceExporter({ url });
  if (protocol === 'http/protobuf')
    return new (require('@opentelemetry/exporter-trace-otlp-proto') as typeof OtlpProto).OTLPTraceExporter({ url });
  throw new TracingConfigError(
    `OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}" is not supported: use http/protobuf or http/json (an OpenTelemetry Collector can take gRPC onwards)`,
  );
}

export function tracingEnabled(): boolean {
  return current?.enabled ?? false;
}

export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** Attributes of the conversation on the span that is current, when there is one (and tracing is on). */
export function annotateActiveSpan(attributes: Record<string, string | number | boolean | undefined>): void {
  const span: Span | undefined = trace.getSpan(context.active());
  if (!span || !span.isRecording()) return;
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
}
