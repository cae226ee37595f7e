// The replay gate: before a deploy, every recorded history and a sample of live ones (fetched from the
// running Temporal) replay against the new workflow bundle. One nondeterminism error refuses the deploy:
// a conversation whose history the new code cannot replay would fail at its next workflow task.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';

const { History } = proto.temporal.api.history.v1;
type History = proto.temporal.api.history.v1.IHistory;

export interface GateHistory {
  /** a file name or workflowId/runId, for the report */
  source: string;
  workflowId: string;
  history: History;
}

export interface GateResult {
  replayed: number;
  failures: { source: string; error: string }[];
}

/** The recorded histories (`npm run record-histories` writes them as encoded protobuf). */
export async function recordedHistories(dir: string): Promise<GateHistory[]> {
  const files = (await fs.readdir(dir)).filter((file) => file.endsWith('.binpb')).sort();
  return Promise.all(
    files.map(async (file) => ({
      source: file,
      workflowId: `recorded-${file}`,
      history: History.decode(await fs.readFile(path.join(dir, file))),
    })),
  );
}

/**
 * Up to `limit` live histories of the task queue's workflows: the running ones first (what the new code
 * meets at their next task), then recently closed ones.
 */
export async function liveHistories(client: Client, { limit, taskQueue }: { limit: number; taskQueue: string }): Promise<GateHistory[]> {
  const picked: GateHistory[] = [];
  const queue = taskQueue.replace(/["\\]/g, '');
  for (const status of ['ExecutionStatus = "Running"', 'ExecutionStatus != "Running"']) {
    for await (const execution of client.workflow.list({ query: `TaskQueue = "${queue}" AND ${status}`, pageSize: Math.min(limit, 100) })) {
      if (picked.length >= limit) return picked;
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      // A run whose first task has not completed has nothing to replay yet.
      if ((history.events?.length ?? 0) < 4) continue;
      picked.push({ source: `${execution.workflowId}/${execution.runId}`, workflowId: execution.workflowId, history });
    }
  }
  return picked;
}

/**
 * Replays every history against the bundle; collects failures instead of stopping at the first. Live histories
 * hold encrypted payloads: `dataConverter` is the workers' (its keys), recorded ones pass through it unchanged.
 */
export async function replayAll(bundlePath: string, histories: GateHistory[], dataConverter: DataConverter = {}): Promise<GateResult> {
  const failures: GateResult['failures'] = [];
  const bySource = new Map(histories.map((entry) => [entry.workflowId + ' # ' + entry.source, entry]));
  const results = Worker.runReplayHistories(
    { workflowBundle: { codePath: bundlePath }, dataConverter },
    histories.map(({ workflowId, source, history }) => ({ workflowId: workflowId + ' # ' + source, history })),
  );
  let replayed = 0;
  for await (const result of results) {
    replayed += 1;
    if (result.error) {
      const entry = bySource.get(result.workflowId);
      failures.push({ source: entry?.source ?? result.workflowId, error: (result.error as Error).message ?? String(result.error) });
    }
  }
  return { replayed, failures };
}
