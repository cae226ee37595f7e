// Revival: a conversation whose workflow was terminated, timed out, failed or is wedged (its workflow task
// fails again and again) is brought back as a new run under the same workflow id, from what PostgreSQL
// knows. The transcript is in PostgreSQL already (a run carries it by reference), so a new run needs only
// the counters a run carries (turns, usage, closed items, budget raises) and, for a stateful agent, its
// state. What the dead run left open is closed in words before the new run starts: each pending item
// (recorded as closed, 'withdrawn'), each call the model asked for that has no result (a tool message that
// says it was not run or did not finish), and one assistant message that says what happened, so the model
// and the person both know. Every write is keyed by the dead run, so a revival that runs twice writes once.
// Used by the turn routes (on a message or decision to a dead or wedged run) and by `npm run revive`.
import { createHash } from 'node:crypto';
import { type Client, type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type pg from 'pg';
import type { ServerCatalog } from './agent-server.ts';
import type { Config } from '../config.ts';
import type { ConversationRow } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import { readConversationUsage } from '../db/usage-ledger.ts';
import { insertEvents, insertMessages, readTranscript } from '../db/transcript.ts';
import { mcpInput } from '../mcp/config.ts';
import { sessionSettings } from './session-settings.ts';
import { type ChatMessage, ChatSessionInput, ClosedReason, type NewEvent, type PendingItem } from '../shared/messages.ts';
import { CHAT_SESSION_TASK_TIMEOUT, agentStateQuery } from '../shared/definitions.ts';
import { AGENT_KEY, WAITING_KEY } from '../shared/search-attributes.ts';
import { userSearchAttributes } from '../protection/user-digest.ts';
import { toolMessage } from '../shared/tool-message.ts';
import type { ChatSession } from '../workflows/chat-session.ts';
import { HttpError } from './http-error.ts';
import { FAILURE_STATUS } from '../shared/failures.ts';

export interface RevivalDeps {
  /** the agents the new run is for: its settings, its MCP servers, a stateful agent's kernel */
  catalog: ServerCatalog;
  config: Config;
  client: Client;
  pool: pg.Pool;
}

/** A run whose workflow task has failed or timed out this many times in a row is wedged. */
export const WEDGED_ATTEMPTS = 3;
/** how many closed items the new run is told of (a late decision on one is told it is not pending) */
const CLOSED_KEPT = 100;

export type RunHealth =
  | { state: 'running'; runId: string }
  | { state: 'wedged'; runId: string; attempts: number }
  | { state: 'ended'; runId: string; status: string }
  | { state: 'gone' };

/** What Temporal says of the conversation's current run. */
export async function runHealth(handle: WorkflowHandle): Promise<RunHealth> {
  try {
    const description = await handle.describe();
    const { runId } = description;
    if (description.status.name !== 'RUNNING') return { state: 'ended', runId, status: description.status.name };
    const attempts = description.raw.pendingWorkflowTask?.attempt ?? 0;
    return attempts >= WEDGED_ATTEMPTS ? { state: 'wedged', runId, attempts } : { state: 'running', runId };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || (error as { code?: number }).code === 5) return { state: 'gone' };
    throw error;
  }
}

export interface RevivalOutcome {
  /** what the run was before: ended (with its status), wedged (terminated here), gone, or running (left alone) */
  was: RunHealth;
  revived: boolean;
  /** items closed and calls answered in words */
  closedItems: number;
  answeredCalls: number;
  /**
   * With `turnText`: the turn that message began in the dead run, from that message on, with the words
   * that close it (undefined when the dead run never recorded it: the message is to be sent again).
   */
  turn?: ChatMessage[];
}

export interface RevivalOptions {
  /** revive a run that looks healthy too (an operator's call): it is terminated first */
  force?: boolean;
  /** why, in the words of the terminate reason and the note ("was stuck") */
  how?: string;
  /** the text of a message whose Update was in flight when the run died */
  turnText?: string;
}

/** A turn's answer when its conversation was deleted while it ran. */
export const conversationGone = () => new HttpError(410, 'The conversation was deleted while this turn ran');

/**
 * Within a transaction, until it ends: no other revival of the conversation, and no DELETE of it, runs. A DELETE
 * holds it from its first Temporal call to its rows' removal, so that a revival cannot start a run in between.
 */
export async function lockConversationRuns(db: pg.ClientBase, conversationId: string): Promise<void> {
  await db.query({
    name: 'brigade.revival_lock',
    text: 'SELECT pg_advisory_xact_lock(hashtext($1)::bigint)',
    values: [`brigade.revive:${conversationId}`],
  });
}

/**
 * Brings the conversation back when its run is not healthy (or, with `force`, whatever its state): a wedged
 * run is terminated first. Returns what it found and did; throws when the new run could not be started.
 */
export async function reviveConversation(deps: RevivalDeps, row: ConversationRow, options: RevivalOptions = {}): Promise<RevivalOutcome> {
  const { client, pool } = deps;
  const handle = client.workflow.getHandle(row.workflowId) as WorkflowHandle<ChatSession>;
  const was = await runHealth(handle);
  if (was.state === 'running' && !options.force) return { was, revived: false, closedItems: 0, answeredCalls: 0 };
  const previous = await previousRun(client, row.workflowId);
  if (was.state === 'running' || was.state === 'wedged') {
    const reason =
      was.state === 'wedged'
        ? `wedged: its workflow task failed ${was.attempts} times in a row; revived from PostgreSQL`
        : 'revived by an operator';
    await handle.terminate(reason).catch((error: unknown) => {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    });
  }
  const how =
    options.how ??
    (was.state === 'wedged'
      ? 'was stuck'
      : was.state === 'gone'
        ? 'was gone'
        : was.state === 'ended'
          ? `ended (${was.status.toLowerCase().replace(/_/g, ' ')})`
          : 'was restarted by an operator');
  // One revival at a time per conversation, and its words and its new run together: a start that fails
  // rolls the words back (the next message tries again), and a second request waits, then finds the run.
  const closing = await asUser(pool, row.userId, async (db) => {
    await lockConversationRuns(db, row.id);
    // a DELETE that held the lock meanwhile took the conversation: a run started for it now would outlive it
    const { rowCount } = await db.query({
      name: 'brigade.conversation_exists',
      text: 'SELECT 1 FROM conversations WHERE id = $1',
      values: [row.id],
    });
    if (!rowCount) throw conversationGone();
    const now = await runHealth(handle);
    if (now.state === 'running' && 'runId' in was && now.runId !== was.runId) return undefined;
    const transcript = await readTranscript(db, row.id);
    // keyed by the dead run, so a second revival of it writes nothing again; a run Temporal forgot has no id
    const seed = 'runId' in was ? was.runId : `gone:${row.id}:${transcript.length}`;
    const began = options.turnText === undefined ? -1 : turnStart(transcript, options.turnText);
    const words = await closeInWords(db, row, transcript, seed, how);
    const turn = began >= 0 ? [...transcript.slice(began), ...words.messages] : undefined;
    const input: ChatSessionInput = {
      ...(previous?.input ?? freshInput(deps.catalog, deps.config, row)),
      carried: {
        ...(await carriedFromPostgres(db, row.id, words.closedIds)),
        ...(await stateOf(deps.catalog, client, row, 'runId' in was ? was.runId : undefined, previous?.input)),
      },
    };
    try {
      await client.workflow.start<ChatSession>('chatSession', {
        workflowId: row.workflowId,
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [input],
        workflowTaskTimeout: CHAT_SESSION_TASK_TIMEOUT,
        typedSearchAttributes: [
          { key: AGENT_KEY, value: row.agent },
          ...userSearchAttributes(row.userId),
          { key: WAITING_KEY, value: false },
        ],
        memo: { title: row.title },
        staticSummary: `${row.agent}: ${row.title} (revived)`,
      });
    } catch (error) {
      // Started by another process that did not take the lock (an older API): that run is the conversation now.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    return { ...words, turn };
  });
  // another request revived it while this one waited for the lock
  if (!closing) return { was, revived: true, closedItems: 0, answeredCalls: 0 };
  return {
    was,
    revived: true,
    closedItems: closing.closedIds.length,
    answeredCalls: closing.messages.length - 1,
    ...(closing.turn ? { turn: closing.turn } : {}),
  };
}

/**
 * Where the turn of a message in flight began, or -1 when the dead run never recorded it: the last user
 * message has its text and no finished reply (an assistant message without calls) follows it.
 */
function turnStart(transcript: ChatMessage[], text: string): number {
  const index = transcript.findLastIndex((message) => message.role === 'user');
  if (index < 0 || transcript[index]!.text !== text.trim()) return -1;
  const finished = transcript.slice(index + 1).some((message) => message.role === 'assistant' && !message.toolCalls?.length);
  return finished ? -1 : index;
}

/** The input the current run started with (settings, MCP servers, what it carried), when Temporal still has it. */
async function previousRun(client: Client, workflowId: string): Promise<{ input: ChatSessionInput } | undefined> {
  try {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId },
      maximumPageSize: 1,
    });
    const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    if (!started) return undefined;
    const [raw] = await decodeArrayFromPayloads(client.options.loadedDataConverter, started.input?.payloads);
    const parsed = ChatSessionInput.safeParse(raw);
    return parsed.success ? { input: parsed.data } : undefined;
  } catch {
    return undefined;
  }
}

/** A new conversation's input, for a run Temporal no longer knows (its history is past retention). */
function freshInput(catalog: ServerCatalog, config: Config, row: ConversationRow): ChatSessionInput {
  return {
    conversationId: row.id,
    userId: row.userId,
    agent: row.agent,
    title: row.title,
    ...(row.client ? { client: row.client } : {}),
    settings: sessionSettings(config, catalog),
    ...mcpInput(config.BRIGADE_MCP_CONFIG, catalog, row.agent),
  };
}

const STATE_QUERY_MS = 10_000;

/**
 * A stateful agent's state: as the dead run last held it (a query, which Temporal answers for a closed run
 * by replaying its history on a worker), else what that run started from (carried, or its kernel's first
 * state): changes since are not in PostgreSQL as state, only in the transcript's words.
 */
async function stateOf(
  catalog: ServerCatalog,
  client: Client,
  row: ConversationRow,
  runId: string | undefined,
  previous: ChatSessionInput | undefined,
): Promise<{ agentState?: unknown }> {
  const kernel = catalog.has(row.agent) ? catalog.agent(row.agent).kernel : undefined;
  if (!kernel) return {};
  if (runId) {
    const held = await client
      .withDeadline(Date.now() + STATE_QUERY_MS, () => client.workflow.getHandle(row.workflowId, runId).query(agentStateQuery))
      .catch(() => undefined);
    if (held && held.agentState !== undefined) return { agentState: held.agentState };
  }
  return { agentState: previous?.carried ? previous.carried.agentState : kernel.init(previous?.init) };
}

const keyed = (seed: string, what: string) => {
  const hex = createHash('sha256').update(`${seed}:${what}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

/** Closes what the dead run left open, in the transcript and the event log. */
async function closeInWords(db: pg.ClientBase, row: ConversationRow, transcript: ChatMessage[], seed: string, how: string) {
  const { rows } = await db.query<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM events WHERE conversation_id = $1 AND type IN ('pending.opened', 'pending.closed') ORDER BY id`,
    [row.id],
  );
  const open = new Map<string, PendingItem>();
  for (const { type, data } of rows) {
    if (type === 'pending.opened') open.set(String(data.id), data as unknown as PendingItem);
    else open.delete(String(data.id));
  }
  const reason = `The conversation's workflow ${how}; the conversation was restored from its saved transcript.`;
  const events: NewEvent[] = [...open.values()].map((item) => ({
    key: `pending-closed:${item.id}`,
    type: 'pending.closed',
    data: { id: item.id, kind: item.kind, decision: 'reject', reason, closedAs: 'withdrawn', timedOut: false, supersededBy: null },
  }));
  const waitingOn = new Map([...open.values()].map((item) => [item.callId, item]));
  const answered = new Set(transcript.filter((message) => message.role === 'tool').map((message) => message.callId));
  const messages: ChatMessage[] = [];
  for (const message of transcript) {
    for (const call of message.role === 'assistant' ? (message.toolCalls ?? []) : []) {
      if (answered.has(call.id)) continue;
      const item = waitingOn.get(call.id);
      const error = item
        ? `Not run: this call waited for a person's ${item.kind} when ${reason.charAt(0).toLowerCase()}${reason.slice(1)} Nobody decided it; ask again if it is still wanted.`
        : `No result: ${reason} Whether the call took effect is not known; check before calling it again.`;
      messages.push(toolMessage(call, call.args, { error }));
    }
  }
  const itemsSaid = open.size
    ? ` ${open.size === 1 ? 'One item that waited for a decision was' : `${open.size} items that waited for a decision were`} closed without one.`
    : '';
  const callsSaid = messages.length
    ? ` ${messages.length === 1 ? 'One tool call has' : `${messages.length} tool calls have`} no result from before.`
    : '';
  messages.push({
    id: keyed(seed, 'note'),
    role: 'assistant',
    text: `(This conversation was interrupted: its workflow ${how}. It has been restored from its saved transcript.${itemsSaid}${callsSaid} Everything above is kept; please go on.)`,
  });
  await insertMessages(db, row.id, row.userId, messages);
  if (events.length) await insertEvents(db, row.id, row.userId, events);
  return { closedIds: [...open.keys()], messages };
}

/** The counters a run carries, from the rows every run wrote. */
async function carriedFromPostgres(db: pg.ClientBase, conversationId: string, closedNow: string[]) {
  // every model call made for the conversation, from the usage ledger (its cost and cached part are not counters of the run)
  const { cost: _cost, cachedInputTokens: _cached, ...usage } = await readConversationUsage(db, conversationId);
  const { rows } = await db.query<{ turns: number; rejected: number; raises: number }>(
    `SELECT (SELECT count(*) FROM messages WHERE conversation_id = $1 AND role = 'user')::int AS turns,
            (SELECT count(*) FROM events WHERE conversation_id = $1 AND type = 'signal.rejected')::int AS rejected,
            (SELECT count(*) FROM events WHERE conversation_id = $1 AND type = 'pending.closed'
                AND data->>'kind' = 'budget' AND data->>'decision' = 'approve')::int AS raises`,
    [conversationId],
  );
  const closedRows = await db.query<{ id: string; closedAs: ClosedReason }>(
    `SELECT data->>'id' AS id, data->>'closedAs' AS "closedAs" FROM events
      WHERE conversation_id = $1 AND type = 'pending.closed' ORDER BY events.id DESC LIMIT $2`,
    [conversationId, CLOSED_KEPT],
  );
  const closed = closedRows.rows
    .reverse()
    .filter(({ closedAs }) => ClosedReason.safeParse(closedAs).success)
    .map(({ id, closedAs }) => [id, closedAs] as [string, ClosedReason]);
  for (const id of closedNow) if (!closed.some(([known]) => known === id)) closed.push([id, 'withdrawn']);
  const counts = rows[0]!;
  return {
    turns: counts.turns,
    usage,
    rejectedSignals: counts.rejected,
    closed: closed.slice(-CLOSED_KEPT),
    ...(counts.raises ? { budgetRaises: counts.raises } : {}),
  };
}

/** How often a turn's Update that has not answered looks whether its run is wedged. */
const WATCH_MS = 10_000;

/**
 * Sends a turn's Update (a message, or a decision) and, when the conversation's run is gone, has ended, or
 * is wedged, revives it: a message or decision that never reached a run is sent again to the new one; a
 * message whose turn the dead run had begun is answered with that turn as PostgreSQL has it, closed in
 * words. A healthy run's refusals and failures are the caller's, as before. When revival itself fails: 410.
 */
export async function withRevival<T>(
  deps: RevivalDeps & { log?: (line: string, error?: unknown) => void },
  row: ConversationRow,
  turnText: string | undefined,
  send: () => Promise<T>,
): Promise<T | { messages: ChatMessage[]; pending: PendingItem[] }> {
  const handle = deps.client.workflow.getHandle(row.workflowId);
  let how: string | undefined;
  // A wedged run never answers the Update: terminate it, which ends the wait below.
  let looking: Promise<void> = Promise.resolve();
  const watch = setInterval(() => {
    looking = runHealth(handle)
      .then(async (health) => {
        if (health.state !== 'wedged' || how) return;
        how = 'was stuck';
        await handle.terminate(`wedged: its workflow task failed ${health.attempts} times in a row; revived from PostgreSQL`);
      })
      .catch(() => undefined);
  }, WATCH_MS);
  try {
    return await send();
  } catch (error) {
    // An answer already decided (the conversation was deleted meanwhile: 410) is not a dead run to bring back.
    if (error instanceof HttpError) throw error;
    // A run's own refusal (a validator, a failure of ours) is an answer, not a dead run; the server's failure of an
    // accepted Update whose run ended under it (an operator's terminate, a timeout, a reset) is a dead run.
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure && error.cause.type! in FAILURE_STATUS)
      throw error;
    const health = await runHealth(handle).catch(() => undefined);
    if (!health || health.state === 'running') throw error;
    // the Update reached no run when there was none to reach
    if (error instanceof WorkflowNotFoundError && !how) turnText = undefined;
  } finally {
    clearInterval(watch);
    // A look that began as the Update failed may still terminate the run: the revival must know it did, or
    // it finds a run that merely ended and says so instead of that it was stuck.
    await looking;
  }
  let outcome: RevivalOutcome;
  try {
    outcome = await reviveConversation(deps, row, { ...(how ? { how } : {}), ...(turnText !== undefined ? { turnText } : {}) });
  } catch (error) {
    if (error instanceof HttpError) throw error;
    deps.log?.(`Could not revive conversation ${row.id}`, error);
    throw new HttpError(
      410,
      "This conversation's workflow has ended and it could not be restored from its saved transcript; start a new conversation (its transcript can still be exported).",
    );
  }
  if (outcome.turn) return { messages: outcome.turn, pending: [] };
  return send();
}
