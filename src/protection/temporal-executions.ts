// Erasing from Temporal: executions are deleted (DeleteWorkflowExecution), not only terminated, so that their
// histories leave the server now rather than when the namespace's retention ends.
import type { Client } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { USER_DIGEST_KEY, USER_KEY } from '../shared/search-attributes.ts';
import { isExecutionOf, userDigest } from './user-digest.ts';

type Log = (line: string, error?: unknown) => void;
type Run = { workflowId: string; runId: string; attributes?: TypedSearchAttributes };

/**
 * A value as a visibility query's string literal, or undefined when it holds a quote or a backslash: no
 * escape of them is honoured by every visibility store (the dev server's SQLite matches neither "al\"ice" nor
 * 'al"ice'), and stripping them matched another value (erasing `al"ice` erased alice's executions).
 */
const literal = (value: string): string | undefined => (/["'\\]/.test(value) ? undefined : `"${value}"`);

async function deleteOne(client: Client, namespace: string, execution: { workflowId: string; runId?: string }): Promise<void> {
  try {
    await client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: execution });
  } catch (error) {
    if ((error as { code?: number }).code === 5) return; // NOT_FOUND: already gone
    throw error;
  }
}

async function listRuns(client: Client, query: string, log: Log): Promise<Run[]> {
  const runs: Run[] = [];
  try {
    for await (const run of client.workflow.list({ query }))
      runs.push({ workflowId: run.workflowId, runId: run.runId, attributes: run.typedSearchAttributes });
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
  const runs: Run[] = [];
  const id = literal(workflowId);
  // Brigade's workflow ids are its own (conversation-<uuid>); one that needs quoting is deleted by id alone
  if (id) for (const query of [`WorkflowId = ${id}`, `ParentWorkflowId = ${id}`]) runs.push(...(await listRuns(client, query, log)));
  await deleteOne(client, namespace, { workflowId });
  for (const run of runs) await deleteOne(client, namespace, { workflowId: run.workflowId, runId: run.runId });
}

/**
 * Every execution of the person, with its children: what no conversation row names any more. Found by
 * BrigadeUserDigest (hex: nothing to quote), and by BrigadeUser for runs started before the digest was set
 * when the id needs no quoting; each run listed is deleted only if its BrigadeUser is the id exactly.
 */
export async function deleteExecutionsOfUser(client: Client, namespace: string, user: string, log: Log): Promise<number> {
  const plain = literal(user);
  const queries = [`${USER_DIGEST_KEY.name} = "${userDigest(user)}"`, ...(plain ? [`${USER_KEY.name} = ${plain}`] : [])];
  const runs: Run[] = [];
  for (const query of queries) runs.push(...(await listRuns(client, query, log)));
  const ids = new Set(runs.filter((run) => isExecutionOf(run.attributes, user)).map((run) => run.workflowId));
  for (const workflowId of ids) await deleteExecutions(client, namespace, workflowId, log);
  return ids.size;
}
