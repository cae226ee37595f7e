// Erasing from Temporal: executions are deleted (DeleteWorkflowExecution), not only terminated, so that their
// histories leave the server now rather than when the namespace's retention ends.
import type { Client } from '@temporalio/client';
import { USER_KEY } from '../shared/search-attributes.ts';

type Log = (line: string, error?: unknown) => void;

const quote = (value: string) => value.replace(/["\\]/g, '');

async function deleteOne(client: Client, namespace: string, execution: { workflowId: string; runId?: string }): Promise<void> {
  try {
    await client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: execution });
  } catch (error) {
    if ((error as { code?: number }).code === 5) return; // NOT_FOUND: already gone
    throw error;
  }
}

async function listRuns(client: Client, query: string, log: Log): Promise<{ workflowId: string; runId: string }[]> {
  const runs: { workflowId: string; runId: string }[] = [];
  try {
    for await (const run of client.workflow.list({ query })) runs.push({ workflowId: run.workflowId, runId: run.runId });
  } catch (error) {
    log(`Could not list executions for ${query}`, error);
  }
  return runs;
}

/**
 * Removes a conversation's workflow executions from Temporal (DeleteWorkflowExecution): the current run
 * (terminated first when it runs, which also ends its children under their parent close policy), the
 * earlier runs it continued from, and its child workflows. Visibility lists runs eventually, so the
 * current run is deleted by id whether listed or not; one already gone is fine.
 */
export async function deleteExecutions(client: Client, namespace: string, workflowId: string, log: Log): Promise<void> {
  const runs: { workflowId: string; runId: string }[] = [];
  for (const query of [`WorkflowId = "${quote(workflowId)}"`, `ParentWorkflowId = "${quote(workflowId)}"`])
    runs.push(...(await listRuns(client, query, log)));
  await deleteOne(client, namespace, { workflowId });
  for (const run of runs) await deleteOne(client, namespace, run);
}

/** Every execution that carries the person's search attribute (BrigadeUser), with its children: what no conversation row names any more. */
export async function deleteExecutionsOfUser(client: Client, namespace: string, user: string, log: Log): Promise<number> {
  const runs = await listRuns(client, `${USER_KEY.name} = "${quote(user)}"`, log);
  const ids = new Set(runs.map((run) => run.workflowId));
  for (const workflowId of ids) await deleteExecutions(client, namespace, workflowId, log);
  return ids.size;
}
