// Retention (issue 35): a Temporal Schedule starts the retentionSweep workflow every RETENTION_SWEEP_EVERY;
// its one activity erases conversations whose last event is older than RETENTION_CONVERSATIONS (Temporal
// executions, files and rows, as DELETE /v1/conversations/{id} does) and turns usage rows older than
// RETENTION_USAGE into anonymous daily totals. Each sweep counts what it erased (brigade_retention_*) and
// says so in one log line.
import { Context, log } from '@temporalio/activity';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { createObjectStore } from '../storage/index.ts';
import { metrics } from '../telemetry/metrics.ts';
import type { RetentionActivities, SweepReport } from '../shared/retention.ts';
import { stateQuery } from '../shared/definitions.ts';
import { eraseConversation } from './personal-data.ts';
import { describeError } from '../shared/log-safe.ts';

/** One schedule per deployment, named for its task queue (brigade: retention-sweep-brigade). */
export const retentionScheduleId = (config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>) => `retention-sweep-${config.TEMPORAL_TASK_QUEUE}`;
const BATCH = 100;
/** brigade_expired_conversations answers at most this many at once (036_retention.sql) */
const MOST = 1000;

/**
 * Whether a conversation still has something open: a pending item (an approval, a budget item, a
 * confirmation, an MCP server's question, an agent's open item) or a running turn. Asked of its workflow
 * (the state query), since only the run knows; a run that is gone has nothing open, and one that cannot
 * answer now is taken as open, so the sweep keeps what it is unsure of until the next one.
 */
export async function hasOpenWork(client: Client, workflowId: string): Promise<boolean> {
  try {
    const state = await client.workflow.getHandle(workflowId).query(stateQuery);
    return state.status !== 'idle' || state.pending.length > 0;
  } catch (error) {
    return !(error instanceof WorkflowNotFoundError);
  }
}

export interface RetentionDeps {
  config: Config;
  pool: pg.Pool;
  client: Client;
}

/** The sweep, as a function of the settings and the time (tests call it with a clock of their own). */
export async function sweep(
  { config, pool, client }: RetentionDeps,
  now = new Date(),
  progress: () => void = () => undefined,
): Promise<SweepReport> {
  const report: SweepReport = { conversations: 0, usageRows: 0 };
  const store = createObjectStore(config);
  const quiet = (line: string, error?: unknown) => log.warn(line, error === undefined ? {} : { error: describeError(error) });
  if (config.RETENTION_CONVERSATIONS !== undefined) {
    const before = new Date(now.getTime() - config.RETENTION_CONVERSATIONS);
    report.conversationsBefore = before.toISOString();
    // the ones kept stay first in the function's order: each batch asks for as many more (up to MOST)
    const kept = new Set<string>();
    for (;;) {
      const asked = Math.min(MOST, BATCH + kept.size);
      const { rows: listed } = await pool.query<{ id: string; user_id: string; workflow_id: string }>(
        'SELECT * FROM brigade_expired_conversations($1, $2)',
        [before, asked],
      );
      const rows = listed.filter((row) => !kept.has(row.id));
      for (const row of rows) {
        if (await hasOpenWork(client, row.workflow_id)) {
          kept.add(row.id);
          progress();
          continue;
        }
        await eraseConversation(
          { config, pool, client, store, log: quiet },
          { user: row.user_id, id: row.id, workflowId: row.workflow_id },
        );
        report.conversations++;
        metrics.retentionErased.inc({ kind: 'conversation' });
        progress();
      }
      if (listed.length < asked || rows.length === 0 || kept.size >= MOST) break;
    }
    if (kept.size) report.kept = kept.size;
  }
  if (config.RETENTION_USAGE !== undefined) {
    const before = new Date(now.getTime() - config.RETENTION_USAGE);
    report.usageBefore = before.toISOString();
    const { rows } = await pool.query<{ n: number }>('SELECT brigade_sweep_usage($1) AS n', [before]);
    report.usageRows = rows[0]!.n;
    metrics.retentionErased.inc({ kind: 'usage_row' }, report.usageRows);
  }
  metrics.retentionSweeps.inc();
  return report;
}

/** The activity the schedule's workflow runs; it heartbeats per conversation, so a long sweep is not timed out. */
export function createRetentionActivities(deps: RetentionDeps): RetentionActivities {
  return {
    async sweepRetention(): Promise<SweepReport> {
      const report = await sweep(deps, new Date(), () => Context.current().heartbeat());
      log.info(
        `Retention sweep: erased ${report.conversations} conversation(s) last active before ${report.conversationsBefore ?? '(kept until deleted)'}` +
          `${report.kept ? ` (kept ${report.kept} with an open item or a running turn)` : ''}, ` +
          `${report.usageRows} usage row(s) before ${report.usageBefore ?? '(kept)'}`,
      );
      return report;
    },
  };
}

/**
 * Creates (or updates) the schedule when a retention is set, and removes it when none is: run by every
 * worker at start, idempotently, so the settings of the newest worker win.
 */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<'created' | 'updated' | 'removed' | 'none'> {
  const scheduleId = retentionScheduleId(config);
  const handle = client.schedule.getHandle(scheduleId);
  if (config.RETENTION_CONVERSATIONS === undefined && config.RETENTION_USAGE === undefined) {
    try {
      await handle.delete();
      return 'removed';
    } catch {
      return 'none';
    }
  }
  const spec = { intervals: [{ every: config.RETENTION_SWEEP_EVERY }] };
  const action = { type: 'startWorkflow' as const, workflowType: 'retentionSweep', taskQueue: config.TEMPORAL_TASK_QUEUE, args: [] };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies: { overlap: 'SKIP', catchupWindow: '1 minute' } });
    return 'created';
  } catch (error) {
    if ((error as Error).name !== 'ScheduleAlreadyRunning') throw error;
    await handle.update((previous) => ({ ...previous, spec, action: { ...action, workflowId: previous.action.workflowId } }));
    return 'updated';
  }
}

const DAY_MS = 86_400_000;

/**
 * The retention of the Temporal namespace Brigade creates (the dev server's, the cluster's): closed executions
 * kept as long as conversations are, at least the one day Temporal requires; none when conversations are kept
 * until deleted (Temporal's default then applies).
 */
export function namespaceRetentionMs(config: Pick<Config, 'RETENTION_CONVERSATIONS'>): number | undefined {
  return config.RETENTION_CONVERSATIONS === undefined ? undefined : Math.max(DAY_MS, config.RETENTION_CONVERSATIONS);
}

/** Sets the namespace's retention (UpdateNamespace), for a namespace Brigade created. */
export async function setNamespaceRetention(
  connection: Pick<Client['connection'], 'workflowService'>,
  namespace: string,
  ms: number,
): Promise<void> {
  await connection.workflowService.updateNamespace({
    namespace,
    config: { workflowExecutionRetentionTtl: msToTs(ms) },
  });
}
