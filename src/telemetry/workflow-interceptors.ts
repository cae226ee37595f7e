// Workflow interceptor module, bundled with the workflows (WORKFLOW_INTERCEPTOR_MODULES): the Temporal
// hop of a turn's trace. An Update that arrives with a span context (the client interceptor of
// @temporalio/interceptors-opentelemetry puts it in the `_tracer-data` header) gets a HandleUpdate span, and
// every activity, local activity and child workflow scheduled while it runs carries that span as its parent,
// so the activity interceptor continues the same trace in the worker.
//
// Deterministic by construction: everything here is synchronous (no await, no extra microtask, so the
// workflow's own promises settle in the order they always did), it schedules no command, it reads no clock
// but workflow time and draws no random numbers (span ids are hashes of the run and update ids), and the
// finished span leaves through a sink, which is not called during replay. The library's own workflow
// interceptors wrap handlers in async functions; with this workflow's update handlers racing timers that
// changed the order of commands between a run and its replay, which is why they are not used.
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  AsyncLocalStorage,
  proxySinks,
  workflowInfo,
  type Sinks,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

const TRACE_HEADER = '_tracer-data';

export interface WorkflowSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceFlags: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string>;
  error?: string;
}

export interface TracingSinks extends Sinks {
  brigadeTracing: { span(span: WorkflowSpan): void };
}

interface Parent {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const { brigadeTracing } = proxySinks<TracingSinks>();
const current = new AsyncLocalStorage<Parent>();

function parentFrom(headers: Record<string, Payload> | undefined): Parent | undefined {
  const payload = headers?.[TRACE_HEADER];
  if (!payload) return undefined;
  try {
    const carrier = defaultPayloadConverter.fromPayload<Record<string, string>>(payload);
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(carrier?.traceparent ?? '');
    return match ? { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16) } : undefined;
  } catch {
    return undefined;
  }
}

function withParent<T extends { headers: Record<string, Payload> }>(input: T): T {
  const parent = current.getStore();
  if (!parent) return input;
  const traceparent = `00-${parent.traceId}-${parent.spanId}-${parent.traceFlags.toString(16).padStart(2, '0')}`;
  return { ...input, headers: { ...input.headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent }) } };
}

/** 16 hex digits from text (two FNV-1a 32-bit hashes): the same on every replay, and no RNG drawn. */
function spanIdOf(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  const id = a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
  return id === '0000000000000000' ? '0000000000000001' : id;
}

export const interceptors = (): WorkflowInterceptors => {
  const inbound: WorkflowInboundCallsInterceptor = {
    handleUpdate(input, next) {
      const parent = parentFrom(input.headers);
      if (!parent) return next(input);
      const info = workflowInfo();
      const span: Omit<WorkflowSpan, 'endMs'> = {
        name: `HandleUpdate:${input.name}`,
        traceId: parent.traceId,
        spanId: spanIdOf(`${info.runId}/update/${input.updateId}`),
        parentSpanId: parent.spanId,
        traceFlags: parent.traceFlags,
        startMs: Date.now(),
        attributes: {
          temporalWorkflowId: info.workflowId,
          temporalRunId: info.runId,
          temporalUpdateId: input.updateId,
          'temporal.workflow.type': info.workflowType,
        },
      };
      const result = current.run({ traceId: span.traceId, spanId: span.spanId, traceFlags: span.traceFlags }, () => next(input));
      // a reaction of our own, added before the SDK's: it runs in the same microtask turn and creates no promise the workflow waits on
      result.then(
        () => brigadeTracing.span({ ...span, endMs: Date.now() }),
        (error: unknown) => brigadeTracing.span({ ...span, endMs: Date.now(), error: String((error as Error)?.message ?? error) }),
      );
      return result;
    },
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => next(withParent(input)),
    scheduleLocalActivity: (input, next) => next(withParent(input)),
    startChildWorkflowExecution: (input, next) => next(withParent(input)),
  };
  return { inbound: [inbound], outbound: [outbound] };
};
