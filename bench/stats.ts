// Figures for bench/turns.ts: percentiles, and what a turn costs in a workflow's history (events, bytes and
// where the time went according to the server's event times).
import protoModule from '@temporalio/proto';

const proto = protoModule.temporal.api;
const EventType = proto.enums.v1.EventType;
type HistoryEvent = protoModule.temporal.api.history.v1.IHistoryEvent;

export interface Summary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentiles, in the samples' unit. */
export function summarise(samples: number[]): Summary {
  if (samples.length === 0) return { count: 0, p50: NaN, p95: NaN, p99: NaN, mean: NaN, max: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { count: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), mean, max: sorted.at(-1)! };
}

export const round = (value: number, digits = 1) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);

function timeMs(event: HistoryEvent): number {
  const ts = event.eventTime;
  if (!ts) return NaN;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : Number(String(ts.seconds ?? 0));
  return seconds * 1000 + (ts.nanos ?? 0) / 1e6;
}

/** One turn's slice of a history: every event after the previous update completed, up to this one's completion. */
export interface TurnSlice {
  events: HistoryEvent[];
  /** the update this slice ends with: sendMessage or decide */
  updateName: string;
  startMs: number;
  endMs: number;
}

export function splitByUpdate(events: HistoryEvent[]): TurnSlice[] {
  const slices: TurnSlice[] = [];
  let current: HistoryEvent[] = [];
  let name = '';
  for (const event of events) {
    current.push(event);
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
      name = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? '';
    }
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED) {
      slices.push({ events: current, updateName: name, startMs: timeMs(current[0]!), endMs: timeMs(event) });
      current = [];
    }
  }
  return slices;
}

/** Serialized size: protobuf (History.encode, what the server stores and sends) and JSON for comparison. */
export function sizeOf(events: HistoryEvent[]): { protoBytes: number; jsonBytes: number } {
  const protoBytes = proto.history.v1.History.encode({ events }).finish().length;
  const jsonBytes = Buffer.byteLength(JSON.stringify(proto.history.v1.History.fromObject({ events }).toJSON()));
  return { protoBytes, jsonBytes };
}

/** Bytes of payload data in events (inputs, results, headers, memo), as the data converter made them. */
export function payloadBytesOf(events: HistoryEvent[]): number {
  let bytes = 0;
  const walk = (value: unknown): void => {
    if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
    const record = value as Record<string, unknown>;
    if (record.data instanceof Uint8Array && 'metadata' in record) {
      bytes += record.data.length;
      return;
    }
    for (const child of Object.values(record)) walk(child);
  };
  walk(events);
  return bytes;
}

/** What one turn leaves in a history, mean over turns: events, workflow tasks, bytes and payload bytes. */
export function historyPerTurn(slices: TurnSlice[]): { events: number; workflowTasks: number; protoBytes: number; payloadBytes: number } {
  const n = slices.length || NaN;
  const sum = { events: 0, workflowTasks: 0, protoBytes: 0, payloadBytes: 0 };
  for (const slice of slices) {
    sum.events += slice.events.length;
    sum.workflowTasks += slice.events.filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length;
    sum.protoBytes += sizeOf(slice.events).protoBytes;
    sum.payloadBytes += payloadBytesOf(slice.events);
  }
  return {
    events: sum.events / n,
    workflowTasks: sum.workflowTasks / n,
    protoBytes: sum.protoBytes / n,
    payloadBytes: sum.payloadBytes / n,
  };
}

/** Activities a turn ran: scheduled ones, and local ones (recorded as markers). */
export function countActivities(slice: TurnSlice): number {
  return slice.events.filter(
    (event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED || event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED,
  ).length;
}

/** Where one turn's time went, from the server's event times (ms). */
export interface Phases {
  /** first event of the slice to the update's completion */
  span: number;
  workflowTasks: number;
  /** workflow task scheduled -> started (waiting for the worker's poll) */
  wftQueue: number;
  /** workflow task started -> completed (worker processing + the completion RPC) */
  wftRun: number;
  activities: number;
  /** activity scheduled -> started (matching, the worker's poll) */
  actQueue: number;
  /** activity started -> completed (the activity's code, its DB work and the completion RPC) */
  actRun: number;
}

export function phasesOf(slice: TurnSlice): Phases {
  const byId = new Map<string, HistoryEvent>();
  for (const event of slice.events) byId.set(String(event.eventId), event);
  const phases: Phases = {
    span: slice.endMs - slice.startMs,
    workflowTasks: 0,
    wftQueue: 0,
    wftRun: 0,
    activities: 0,
    actQueue: 0,
    actRun: 0,
  };
  for (const event of slice.events) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      const attrs = event.workflowTaskCompletedEventAttributes!;
      const scheduled = byId.get(String(attrs.scheduledEventId));
      const started = byId.get(String(attrs.startedEventId));
      if (!scheduled || !started) continue;
      phases.workflowTasks += 1;
      phases.wftQueue += timeMs(started) - timeMs(scheduled);
      phases.wftRun += timeMs(event) - timeMs(started);
    }
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const attrs = event.activityTaskCompletedEventAttributes!;
      const scheduled = byId.get(String(attrs.scheduledEventId));
      const started = byId.get(String(attrs.startedEventId));
      if (!scheduled || !started) continue;
      phases.activities += 1;
      phases.actQueue += timeMs(started) - timeMs(scheduled);
      phases.actRun += timeMs(event) - timeMs(started);
    }
  }
  return phases;
}

/** Mean of each phase over several turns. */
export function meanPhases(all: Phases[]): Phases | undefined {
  if (all.length === 0) return undefined;
  const sum: Phases = { span: 0, workflowTasks: 0, wftQueue: 0, wftRun: 0, activities: 0, actQueue: 0, actRun: 0 };
  for (const phases of all) for (const key of Object.keys(sum) as (keyof Phases)[]) sum[key] += phases[key];
  for (const key of Object.keys(sum) as (keyof Phases)[]) sum[key] /= all.length;
  return sum;
}
