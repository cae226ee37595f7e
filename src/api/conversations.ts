import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Router, type Request, type Response } from 'express';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { findConversation, insertConversation, listConversations, readUsage } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import { readTranscript } from '../db/transcript.ts';
import { AGENT_SPECS } from '../shared/agents.ts';
import { chatSessionWorkflowId, decideUpdate, sendMessageUpdate, stateQuery } from '../shared/definitions.ts';
import type { AgentName, ChatSessionInput, SessionSettings } from '../shared/messages.ts';
import { AGENT_KEY, USER_KEY, WAITING_KEY } from '../shared/search-attributes.ts';
import type { chatSession } from '../workflows/chat-session.ts';
import { principalOf, type Principal } from './auth.ts';
import type { EventNotifier } from './event-notifier.ts';
import { streamEvents } from './event-stream.ts';
import { HttpError, notFound, parseBody } from './http-error.ts';
import { CreateConversationBody, DecisionBody, MessageBody } from './schemas.ts';
import { agentView, sousInit } from './sous.ts';

export interface ConversationDeps {
  config: Config;
  client: Client;
  pool: pg.Pool;
  notifier: EventNotifier;
}

export const sessionSettings = (config: Config): SessionSettings => ({
  maxSteps: config.AGENT_MAX_STEPS,
  maxToolErrors: config.AGENT_MAX_TOOL_ERRORS,
  approvalTimeoutMs: config.APPROVAL_TIMEOUT,
  continueAsNewAfterTurns: config.CONTINUE_AS_NEW_AFTER_TURNS,
  modelTimeoutMs: config.MODEL_TIMEOUT,
  modelMaxAttempts: config.MODEL_MAX_ATTEMPTS,
});

function requireRole(principal: Principal, agent: AgentName): void {
  const role = AGENT_SPECS[agent].requiredRole;
  if (role && !principal.roles.includes(role)) {
    throw new HttpError(403, `Only users with the "${role}" role may use the ${agent} agent`);
  }
}

export function conversationRoutes({ config, client, pool, notifier }: ConversationDeps): Router {
  const router = Router();

  /** The caller's conversation, or 404 whether it is missing or someone else's. */
  async function owned(req: Request, res: Response) {
    const principal = principalOf(res);
    const row = await asUser(pool, principal.user, (db) => findConversation(db, String(req.params.id)));
    if (!row) throw notFound();
    requireRole(principal, row.agent);
    return { principal, row, handle: client.workflow.getHandle(row.workflowId) as WorkflowHandle<typeof chatSession> };
  }

  router.post('/conversations', async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(CreateConversationBody, req.body);
    requireRole(principal, body.agent);
    if (body.client && principal.client && body.client !== principal.client) {
      throw new HttpError(403, `This token acts for client "${principal.client}" only`);
    }
    const id = randomUUID();
    const workflowId = chatSessionWorkflowId(id);
    const title = body.title ?? `${body.agent} conversation`;
    const clientName = principal.client ?? body.client;
    const init = await sousInit(pool, principal.user, body);
    const input: ChatSessionInput = {
      conversationId: id,
      userId: principal.user,
      agent: body.agent,
      title,
      client: clientName,
      settings: sessionSettings(config),
      ...(init ? { init } : {}),
    };
    // Start inside the row's transaction: a failed start rolls the row back, and the workflow writes
    // nothing before the first message, by which time the row has committed.
    await asUser(pool, principal.user, async (db) => {
      await insertConversation(db, { id, userId: principal.user, agent: body.agent, client: clientName ?? null, title, workflowId });
      await withinDeadline(client, () => client.workflow.start<typeof chatSession>('chatSession', {
        workflowId,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        args: [input],
        typedSearchAttributes: [
          { key: AGENT_KEY, value: body.agent },
          { key: USER_KEY, value: principal.user },
          { key: WAITING_KEY, value: false },
        ],
        memo: { title },
        staticSummary: `${body.agent}: ${title}`,
      }));
    });
    res.status(201).json({ id, agent: body.agent, workflowId });
  });

  router.get('/conversations', async (_req, res) => {
    const principal = principalOf(res);
    const rows = await asUser(pool, principal.user, (db) => listConversations(db, 100));
    res.json({
      conversations: rows.map(({ id, agent, workflowId, title, createdAt }) => ({ id, agent, workflowId, title, createdAt })),
    });
  });

  router.get('/conversations/:id', async (req, res) => {
    const { principal, row, handle } = await owned(req, res);
    const [state, stored] = await Promise.all([
      withinDeadline(client, () => handle.query(stateQuery)),
      asUser(pool, principal.user, async (db) => ({
        messages: await readTranscript(db, row.id),
        usage: await readUsage(db, row.id),
      })),
    ]);
    res.json({
      id: row.id,
      agent: row.agent,
      title: row.title,
      workflowId: row.workflowId,
      createdAt: row.createdAt,
      status: state.status,
      messages: stored.messages,
      pending: state.pending,
      usage: stored.usage,
      ...agentView(state),
    });
  });

  router.post('/conversations/:id/messages', async (req, res) => {
    const { handle } = await owned(req, res);
    const body = parseBody(MessageBody, req.body);
    const result = await handle.executeUpdate(sendMessageUpdate, { args: [body], updateId: idempotencyKey(req) });
    res.json(result);
  });

  router.post('/conversations/:id/decisions', async (req, res) => {
    const { handle } = await owned(req, res);
    const body = parseBody(DecisionBody, req.body);
    const result = await handle.executeUpdate(decideUpdate, { args: [body], updateId: idempotencyKey(req) });
    res.json(result);
  });

  router.get('/conversations/:id/events', async (req, res) => {
    const { principal, row } = await owned(req, res);
    await streamEvents(req, res, { pool, notifier, userId: principal.user, conversationId: row.id });
  });

  return router;
}

const QUICK_CALL_MS = 5_000;

/**
 * Calls that should answer at once get a deadline, so a Temporal outage is a prompt 503 rather than
 * the client's retries running on. Turns are not bounded this way: they wait for the model and tools.
 */
function withinDeadline<T>(client: Client, fn: () => Promise<T>): Promise<T> {
  return client.withDeadline(Date.now() + QUICK_CALL_MS, fn);
}

/** A client that retries a POST with the same Idempotency-Key gets the first outcome, not a second turn. */
function idempotencyKey(req: Request): string | undefined {
  const key = req.header('Idempotency-Key');
  if (key === undefined) return undefined;
  if (!/^[\w.:-]{1,200}$/.test(key)) throw new HttpError(400, 'Idempotency-Key: at most 200 letters, digits or ._:-');
  return key;
}
