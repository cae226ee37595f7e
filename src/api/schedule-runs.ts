// One run of a person's schedule (issue 48), the activity of the scheduledRun workflow. In the API's layer because
// a run is a request of the owner's made without them: it starts a conversation and sends a turn as the API does
// (conversation-start.ts, the access rule, the per-minute limits). It acts for the owner as their personal API key
// would (brigade_schedule_for_run: disabled, gone from API_TOKENS, not seen for too long; their recorded roles and
// client), and sends the text into a new conversation or into the given one, never deciding anything there: a
// conversation with an open item or a running turn is skipped, and the skip is the schedule's lastRun. The message
// is sent once it is accepted: a turn that parks on an approval waits for the person like any other. An owner who
// may no longer act pauses the schedule, with the reason in its lastRun and GET /v1/schedules.
import { Context, log } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import type { ServerCatalog } from './agent-server.ts';
import type { Principal } from './auth-types.ts';
import { conversationAccess } from './conversation-access.ts';
import { startConversation } from './conversation-start.ts';
import { HttpError } from './http-error.ts';
import { countRequest } from './user-limits.ts';
import type { Config } from '../config.ts';
import { findConversation } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import { holdSchedule, recordRun, scheduleForRun } from '../db/schedules.ts';
import { chatSessionWorkflowId, sendMessageUpdate, stateQuery } from '../shared/definitions.ts';
import { type LastRun, RUN_ATTEMPTS, type RunScheduleInput, type ScheduleActivities } from '../shared/schedules.ts';
import { describeError } from '../shared/log-safe.ts';
import type { ChatSession } from '../workflows/chat-session.ts';
import { deleteTemporalSchedule, pauseTemporalSchedule } from '../schedules/temporal-schedule.ts';

export interface ScheduleRunDeps {
  catalog: ServerCatalog;
  config: Config;
  client: Client;
  pool: pg.Pool;
}

const QUICK_CALL_MS = 5_000;

/** Why the run did not send, in a sentence for the person; `pause` when the schedule must stop until they act. */
class NotSent extends Error {
  readonly outcome: 'skipped' | 'paused' | 'failed';
  readonly conversationId: string | undefined;
  constructor(outcome: 'skipped' | 'paused' | 'failed', reason: string, conversationId?: string) {
    super(reason);
    this.outcome = outcome;
    this.conversationId = conversationId;
  }
}

const FAILED = 'Failed: the message could not be sent (Brigade or Temporal was not answering); the next run tries again.';

/** This activity's attempt, or the first outside an activity (a direct call). */
function attempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

export function createScheduleActivities(deps: ScheduleRunDeps): ScheduleActivities {
  return { runSchedule: (input) => runSchedule(deps, input) };
}

export async function runSchedule(deps: ScheduleRunDeps, input: RunScheduleInput): Promise<LastRun> {
  const { config, client, pool } = deps;
  const at = new Date().toISOString();
  const schedule = await scheduleForRun(pool, input.scheduleId, config.AUTH_API_KEY_OWNER_UNSEEN);
  if (!schedule) {
    // deleted between the Temporal Schedule's trigger and now (a delete removes the Schedule first; this is the race)
    await deleteTemporalSchedule(client, input.scheduleId).catch(() => undefined);
    return { at, outcome: 'gone' };
  }
  let run: LastRun;
  try {
    if (schedule.paused) throw new NotSent('skipped', 'The schedule is paused.');
    if (schedule.refused) throw new NotSent('paused', `Paused: ${schedule.refused}.`);
    const principal: Principal = {
      user: schedule.userId,
      roles: schedule.roles,
      ...(schedule.client ? { client: schedule.client } : {}),
      via: 'api-key',
    };
    const access = conversationAccess(deps.catalog, pool);
    ownerMay(() => access.requireAgentRole(principal, schedule.agent));
    const conversationId = schedule.conversationId
      ? await intoConversation(deps, access, principal, schedule.conversationId, schedule.text, input.runKey)
      : await intoNewConversation(deps, input.scheduleId, principal, schedule.agent, input.newConversationId, schedule.text, input.runKey);
    run = { at, outcome: 'sent', conversationId };
  } catch (error) {
    if (!(error instanceof NotSent)) {
      // the reason a person reads is ours; what went wrong is in the worker's log by its kind, never its words
      log.warn('A scheduled run failed', { scheduleId: input.scheduleId, error: describeError(error) });
      if (attempt() < RUN_ATTEMPTS) throw error;
      run = { at, outcome: 'failed', reason: FAILED };
    } else {
      run = {
        at,
        outcome: error.outcome,
        ...(error.conversationId ? { conversationId: error.conversationId } : {}),
        reason: error.message,
      };
      if (error.outcome === 'paused') await pauseTemporalSchedule(client, input.scheduleId, true, error.message);
    }
  }
  await asUser(pool, schedule.userId, (db) => recordRun(db, input.scheduleId, run, run.outcome === 'paused' ? run.reason : undefined));
  return run;
}

/** The owner's standing for the agent now: a refusal (their role is gone, the agent is not served) pauses the schedule. */
function ownerMay(check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof HttpError && error.status === 403) throw new NotSent('paused', `Paused: ${error.message}.`);
    throw error;
  }
}

/** The per-minute limits a personal key's requests count against: over one, this run is skipped. */
async function withinLimits(pool: pg.Pool, user: string, kind: 'conversations' | 'turns', limit: number): Promise<void> {
  try {
    await countRequest(pool, user, kind, limit);
  } catch (error) {
    if (error instanceof HttpError && error.status === 429) throw new NotSent('skipped', `Skipped: ${error.message}.`);
    throw error;
  }
}

async function intoNewConversation(
  deps: ScheduleRunDeps,
  scheduleId: string,
  principal: Principal,
  agent: string,
  id: string,
  text: string,
  runKey: string,
): Promise<string> {
  const { catalog, config, client, pool } = deps;
  const made = await asUser(pool, principal.user, (db) => findConversation(db, id));
  if (!made) {
    await withinLimits(pool, principal.user, 'conversations', config.USER_NEW_CONVERSATIONS_PER_MINUTE);
    const server = catalog.server(agent);
    const context = { pool, principal, body: { agent, ...(principal.client ? { client: principal.client } : {}) } };
    let init;
    try {
      await server?.create?.authorize?.(context);
      init = await server?.create?.init?.(context);
    } catch (error) {
      if (error instanceof HttpError && error.status < 500) throw new NotSent('paused', `Paused: ${error.message}.`);
      throw error;
    }
    await asUser(pool, principal.user, async (db) => {
      if (!(await holdSchedule(db, scheduleId))) throw new NotSent('skipped', 'The schedule was deleted.');
      await startConversation(deps, db, {
        id,
        userId: principal.user,
        agent,
        ...(principal.client ? { client: principal.client } : {}),
        ...(init ? { init } : {}),
      }).catch((error: unknown) => {
        // a retried activity whose first attempt's start went through but whose commit did not
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        return chatSessionWorkflowId(id);
      });
    });
  }
  await send(deps, principal.user, id, text, runKey);
  return id;
}

async function intoConversation(
  deps: Pick<ScheduleRunDeps, 'config' | 'client' | 'pool'>,
  access: ReturnType<typeof conversationAccess>,
  principal: Principal,
  id: string,
  text: string,
  runKey: string,
): Promise<string> {
  const { client, pool } = deps;
  const row = await asUser(pool, principal.user, (db) => findConversation(db, id));
  if (!row) throw new NotSent('paused', 'Paused: its conversation was deleted.', id);
  ownerMay(() => access.requireClientAccess(principal, row.agent, row.client));
  const handle = client.workflow.getHandle<ChatSession>(row.workflowId);
  let state;
  try {
    state = await client.withDeadline(Date.now() + QUICK_CALL_MS, () => handle.query(stateQuery));
  } catch {
    throw new NotSent(
      'skipped',
      'Skipped: the conversation did not answer (its run has ended or is busy); a message from you brings it back.',
      id,
    );
  }
  // never a decision: a message into a parked turn would answer its open item
  if (state.pending.length > 0) throw new NotSent('skipped', 'Skipped: the conversation has an open item waiting for you.', id);
  if (state.status !== 'idle') throw new NotSent('skipped', 'Skipped: a turn was still running in the conversation.', id);
  await send(deps, principal.user, id, text, runKey);
  return id;
}

/** Sends the text as the owner's message and returns once the conversation accepted it; its turn runs on without us. */
async function send(
  { config, client, pool }: Pick<ScheduleRunDeps, 'config' | 'client' | 'pool'>,
  user: string,
  conversationId: string,
  text: string,
  runKey: string,
): Promise<void> {
  await withinLimits(pool, user, 'turns', config.USER_TURNS_PER_MINUTE);
  const handle = client.workflow.getHandle<ChatSession>(chatSessionWorkflowId(conversationId));
  try {
    await handle.startUpdate(sendMessageUpdate, { args: [{ text }], updateId: runKey, waitForStage: WorkflowUpdateStage.ACCEPTED });
  } catch (error) {
    // the run's own refusal in its words (a turn began meanwhile): skipped like a running turn
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure)
      throw new NotSent('skipped', `Skipped: ${error.cause.message}`, conversationId);
    throw error;
  }
}
