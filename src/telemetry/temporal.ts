// The Temporal hops of a turn's trace: the client interceptor of @temporalio/interceptors-opentelemetry puts
// the span context in the headers of starts, Updates and queries; Brigade's workflow interceptors (in the
// bundle, workflow-interceptors.ts) make the HandleUpdate span from workflow time, pass it on to the
// activities it schedules and hand it out through the `brigadeTracing` sink; the library's activity
// interceptor continues the trace in the worker.
import { createRequire } from 'node:module';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { Context as ActivityContext } from '@temporalio/activity';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { WorkflowInfo } from '@temporalio/workflow';
import { countEvents } from './metrics.ts';
import type { TracingSinks, WorkflowSpan } from './workflow-interceptors.ts';
import { annotateActiveSpan, initTracing } from './tracing.ts';
import { runInTurnContext, turnAttributes, turnFields } from './turn-context.ts';

const require = createRequire(import.meta.url);
// loaded only when tracing is on
const otel = () => require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel;

/**
 * Workflow interceptor modules, bundled with the workflows whether tracing is on or not, so that one bundle
 * serves both. They trace only runs started with a trace context (workflow-interceptors.ts says why) and add
 * no commands; with tracing off in the worker their spans go to a no-op sink.
 */
export const WORKFLOW_INTERCEPTOR_MODULES: string[] = [new URL('./workflow-interceptors.ts', import.meta.url).pathname];

/** Client interceptors: the OpenTelemetry one when tracing is on, none otherwise. */
export function clientInterceptors(): ClientInterceptors {
  return initTracing().enabled ? { workflow: [new (otel().OpenTelemetryWorkflowClientInterceptor)()] } : {};
}

/** Brigade's own activity interceptor: the conversation on the span and in scope, pending items counted. */
class TurnActivityInterceptor implements ActivityInboundCallsInterceptor {
  private readonly ctx: ActivityContext;
  constructor(ctx: ActivityContext) {
    this.ctx = ctx;
  }
  async execute(
    input: Parameters<ActivityInboundCallsInterceptor['execute'] & {}>[0],
    next: Parameters<ActivityInboundCallsInterceptor['execute'] & {}>[1],
  ) {
    const first = input.args[0];
    const turn = { ...turnFields(first), activity: this.ctx.info.activityType };
    annotateActiveSpan(turnAttributes(turn));
    const result = await runInTurnContext(turn, () => next(input));
    // after success only, so a retried attempt does not count its events twice
    countEvents((first as { events?: unknown } | undefined)?.events);
    return result;
  }
}

export interface WorkerTelemetry {
  activityInbound: ActivityInterceptorsFactory[];
  sinks: InjectedSinks<TracingSinks>;
}

export function workerTelemetry(): WorkerTelemetry {
  const tracing = initTracing();
  const activityInbound: ActivityInterceptorsFactory[] = [
    ...(tracing.enabled ? [(ctx: ActivityContext) => ({ inbound: new (otel().OpenTelemetryActivityInboundInterceptor)(ctx) })] : []),
    (ctx: ActivityContext) => ({ inbound: new TurnActivityInterceptor(ctx) }),
  ];
  const processor = tracing.spanProcessor;
  const sinks: InjectedSinks<TracingSinks> = {
    brigadeTracing: {
      span: { fn: processor ? (info, span) => processor.onEnd(readableSpan(span, info, tracing.resource!)) : () => undefined },
    },
  };
  return { activityInbound, sinks };
}

const msToHr = (ms: number): [number, number] => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** A finished span from the workflow sandbox, in the shape span processors and OTLP exporters read. */
function readableSpan(span: WorkflowSpan, info: WorkflowInfo, resource: Resource): ReadableSpan {
  const duration = Math.max(0, span.endMs - span.startMs);
  return {
    name: span.name,
    kind: SpanKind.SERVER,
    spanContext: () => ({ traceId: span.traceId, spanId: span.spanId, traceFlags: span.traceFlags }),
    parentSpanId: span.parentSpanId,
    startTime: msToHr(span.startMs),
    endTime: msToHr(span.endMs),
    duration: msToHr(duration),
    status: span.error ? { code: SpanStatusCode.ERROR, message: span.error } : { code: SpanStatusCode.UNSET },
    attributes: { ...span.attributes, 'temporal.task_queue': info.taskQueue, 'temporal.namespace': info.namespace },
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationLibrary: { name: '@temporalio/interceptors-opentelemetry' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
