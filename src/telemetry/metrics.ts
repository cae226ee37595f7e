// Brigade's Prometheus metrics: one registry per process, filled by the API (turns, SSE clients) and the
// worker (model tokens, tools, pending items, decisions, timeouts). Names start with brigade_; the Temporal
// SDK's own metrics (temporal_*) are appended by the /metrics handler from the Runtime's exporter.
import client from 'prom-client';

export const registry = new client.Registry();

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300];

export const metrics = {
  turns: new client.Counter({
    name: 'brigade_turns_total',
    help: 'Turns (messages and decisions) answered by the API, by agent, kind and outcome (ok, waiting, rejected, error, aborted)',
    labelNames: ['agent', 'kind', 'outcome'] as const,
    registers: [registry],
  }),
  turnSeconds: new client.Histogram({
    name: 'brigade_turn_duration_seconds',
    help: 'Time from a turn request to its answer, by agent, kind and outcome',
    labelNames: ['agent', 'kind', 'outcome'] as const,
    buckets: SECONDS,
    registers: [registry],
  }),
  modelCalls: new client.Counter({
    name: 'brigade_model_calls_total',
    help: 'Model calls, by agent, model and outcome (ok, error)',
    labelNames: ['agent', 'model', 'outcome'] as const,
    registers: [registry],
  }),
  modelSeconds: new client.Histogram({
    name: 'brigade_model_call_duration_seconds',
    help: 'Duration of one model call (streamed to the end), by agent and model',
    labelNames: ['agent', 'model'] as const,
    buckets: SECONDS,
    registers: [registry],
  }),
  modelTokens: new client.Counter({
    name: 'brigade_model_tokens_total',
    help: 'Model tokens, by agent, model and type (input, output)',
    labelNames: ['agent', 'model', 'type'] as const,
    registers: [registry],
  }),
  modelCachedTokens: new client.Counter({
    name: 'brigade_model_cached_input_tokens_total',
    help: "Input tokens the provider read from its context cache (part of brigade_model_tokens_total's input), by agent and model",
    labelNames: ['agent', 'model'] as const,
    registers: [registry],
  }),
  toolCalls: new client.Counter({
    name: 'brigade_tool_calls_total',
    help: "Tool runs, by tool (an MCP server's tools as mcp:<server>)",
    labelNames: ['tool'] as const,
    registers: [registry],
  }),
  toolErrors: new client.Counter({
    name: 'brigade_tool_errors_total',
    help: "Tool runs that failed, by tool (an MCP server's tools as mcp:<server>)",
    labelNames: ['tool'] as const,
    registers: [registry],
  }),
  pendingWaiting: new client.Gauge({
    name: 'brigade_pending_waiting',
    help: 'Pending items (approvals, confirmations, patch sets) opened and not yet closed, by kind, as this worker process saw them since it started',
    labelNames: ['kind'] as const,
    registers: [registry],
  }),
  pendingOpened: new client.Counter({
    name: 'brigade_pending_opened_total',
    help: 'Pending items opened, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  }),
  decisions: new client.Counter({
    name: 'brigade_decisions_total',
    help: 'Pending items closed, by kind, decision and how they closed (decided, answered, superseded, expired...)',
    labelNames: ['kind', 'decision', 'closed_as'] as const,
    registers: [registry],
  }),
  timeouts: new client.Counter({
    name: 'brigade_timeouts_total',
    help: 'Things that ran out of time: pending items nobody answered (what=pending:<kind>) and model calls (what=model)',
    labelNames: ['what'] as const,
    registers: [registry],
  }),
  sseClients: new client.Gauge({
    name: 'brigade_sse_clients',
    help: 'Event streams (GET /v1/conversations/:id/events) connected now',
    registers: [registry],
  }),
  retentionSweeps: new client.Counter({
    name: 'brigade_retention_sweeps_total',
    help: 'Retention sweeps finished (RETENTION_CONVERSATIONS, RETENTION_USAGE)',
    registers: [registry],
  }),
  retentionErased: new client.Counter({
    name: 'brigade_retention_erased_total',
    help: 'What retention sweeps erased: kind=conversation (with its files and Temporal executions) or usage_row (kept as anonymous totals)',
    labelNames: ['kind'] as const,
    registers: [registry],
  }),
};

/** distinct values a label may take per metric before further ones are counted as "other" */
export const MAX_LABEL_VALUES = 50;
const labelValues = new Map<string, Set<string>>();

/**
 * A label value that cannot grow a metric without bound: names that come from outside (an MCP server's tool
 * names, a model's reported version) are kept while they are few and short, and become "other" after that.
 * Each distinct value is a time series the scraper keeps; a server that invents a name per call must not
 * exhaust its memory, nor the worker's.
 */
export function boundedLabel(metric: string, value: string): string {
  if (value.length > 64 || !/^[\w.:/-]+$/.test(value)) return 'other';
  let seen = labelValues.get(metric);
  if (!seen) labelValues.set(metric, (seen = new Set()));
  if (seen.has(value)) return value;
  if (seen.size >= MAX_LABEL_VALUES) return 'other';
  seen.add(value);
  return value;
}

let defaultsCollected = false;
/** Process metrics (CPU, memory, event loop lag) as brigade_process_*, once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  client.collectDefaultMetrics({ register: registry, prefix: 'brigade_' });
}

/** Counts what the workflow handed an activity to record: pending items opened and closed. */
export function countEvents(events: unknown): void {
  if (!Array.isArray(events)) return;
  for (const event of events as { type?: string; data?: Record<string, unknown> }[]) {
    const data = event?.data ?? {};
    const kind = String(data.kind ?? 'unknown');
    if (event?.type === 'pending.opened') {
      metrics.pendingOpened.inc({ kind });
      metrics.pendingWaiting.inc({ kind });
    } else if (event?.type === 'pending.closed') {
      metrics.pendingWaiting.dec({ kind });
      metrics.decisions.inc({ kind, decision: String(data.decision ?? 'none'), closed_as: String(data.closedAs ?? 'unknown') });
      if (data.timedOut === true) metrics.timeouts.inc({ what: `pending:${kind}` });
    }
  }
}
