import { randomUUID } from 'node:crypto';
import { type Client, type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { FAILURE_STATUS } from '../shared/failures.ts';
import { Router, type Request, type Response } from 'express';
import type pg from 'pg';
import type { z } from 'zod';
import type { Config } from '../config.ts';
import { type ConversationRow, findConversation, listByActivity, renameConversation } from '../db/conversations.ts';
import { writeBatch } from '../db/batch.ts';
import { claimIdempotencyKey, recordIdempotentResponse } from '../db/idempotency.ts';
import { asUser } from '../db/pool.ts';
import { findTreeMessage, readBranchView, readPathTo } from '../db/conversation-tree.ts';
import { latestSummary } from '../db/summaries.ts';
import type { ServerCatalog } from './agent-server.ts';
import { startConversation } from './conversation-start.ts';
import { searchSnippet } from './search-snippet.ts';
import type { AgentKernel } from '../shared/agent-kernel.ts';
import type { CreateBody } from './agent-server.ts';
import {
  agentStateQuery,
  branchTurnUpdate,
  chatSessionWorkflowId,
  decideUpdate,
  sendMessageUpdate,
  stateQuery,
  switchBranchUpdate,
} from '../shared/definitions.ts';
import { emptyUsage } from '../shared/messages.ts';
import { stateOnPath } from '../db/agent-snapshots.ts';
import { storableJson } from '../shared/safe-text.ts';
import type { ChatSession } from '../workflows/chat-session.ts';
import { principalOf } from './auth.ts';
import type { ConversationAccess } from './conversation-access.ts';
import { normalizeClientId } from '../shared/client-id.ts';
import type { EventNotifier } from './event-notifier.ts';
import { streamEvents } from './event-stream.ts';
import { HttpError, notFound, parseBody } from './http-error.ts';
import { idempotencyKey, keyReused, requestHash } from './idempotency.ts';
import {
  BranchBody,
  DecisionBody,
  EditBody,
  ForkBody,
  ListQuery,
  MessageBody,
  RegenerateBody,
  RenameBody,
  createConversationBody,
  encodeCursor,
} from './schemas.ts';
import { budgetView, hasBudget } from './budget-view.ts';
import { approverDecision, refuseSelfApproval } from './budget-approval.ts';
import { readConversationUsage, readLedgerTotals } from '../db/usage-ledger.ts';
import { noteConversation } from './metrics.ts';
import { countRequest, openStreamLease } from './user-limits.ts';
import { conversationGone, runHealth, withRevival } from './revival.ts';

export interface ConversationDeps {
  catalog: ServerCatalog;
  access: ConversationAccess;
  config: Config;
  client: Client;
  pool: pg.Pool;
  notifier: EventNotifier;
  log?: (line: string, error?: unknown) => void;
}

export function conversationRoutes({ catalog, access, config, client, pool, notifier, log = () => undefined }: ConversationDeps): Router {
  const router = Router();
  const CreateConversationBody = createConversationBody(catalog);

  /** The caller's conversation, or 404 whether it is missing or someone else's; 403 without its agent's role. */
  async function owned(req: Request, res: Response) {
    const { principal, row } = await access.authorizedConversation(res, String(req.params.id));
    return { principal, row, handle: client.workflow.getHandle(row.workflowId) as WorkflowHandle<ChatSession> };
  }

  router.post('/conversations', async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(CreateConversationBody, req.body);
    access.requireAgentRole(principal, body.agent);
    await countRequest(pool, principal.user, 'conversations', config.USER_NEW_CONVERSATIONS_PER_MINUTE);
    const bodyClient = body.client === undefined ? undefined : normalizeClientId(body.client);
    if (bodyClient && principal.client && bodyClient !== principal.client) {
      throw new HttpError(403, `This token acts for client "${principal.client}" only`);
    }
    const server = catalog.server(body.agent);
    const context = { pool, principal, body: { ...body, client: bodyClient } as CreateBody };
    await server?.create?.authorize?.(context);
    const key = idempotencyKey(req);
    const id = randomUUID();
    const workflowId = chatSessionWorkflowId(id);
    const clientName = principal.client ?? bodyClient;
    const init = await server?.create?.init?.(context);
    const created = { id, agent: body.agent, workflowId };
    noteConversation(res, { conversationId: id, agent: body.agent, userId: principal.user });
    // Start inside the row's transaction: a failed start rolls the row back (and the key's claim with it),
    // and the workflow writes nothing before the first message, by which time the row has committed.
    const earlier = await asUser(pool, principal.user, async (db) => {
      if (key) {
        const claim = {
          userId: principal.user,
          scope: 'create',
          key,
          requestHash: requestHash('POST /v1/conversations', body),
          status: 201,
          response: created,
        };
        const first = await claimIdempotencyKey(db, claim);
        if (first) {
          if (first.requestHash !== claim.requestHash) throw keyReused();
          return first;
        }
      }
      await startConversation({ catalog, config, client }, db, {
        id,
        userId: principal.user,
        agent: body.agent,
        ...(body.title === undefined ? {} : { title: body.title }),
        ...(clientName ? { client: clientName } : {}),
        ...(init ? { init } : {}),
      });
      return undefined;
    });
    if (earlier) {
      res.setHeader('Idempotent-Replayed', 'true');
      res.status(earlier.status ?? 201).json(earlier.response);
      return;
    }
    res.status(201).json(created);
  });

  /** A stateful agent's state as its run holds it now (a conversation older than state snapshots), or its first state. */
  async function stateOfRun(handle: WorkflowHandle<ChatSession>, kernel: AgentKernel): Promise<unknown> {
    const held = await withinDeadline(client, () => handle.query(agentStateQuery)).catch(() => undefined);
    return held?.agentState !== undefined ? held.agentState : kernel.init(undefined);
  }

  // Fork (issue 45): a new conversation with its own workflow whose transcript is a copy of the path up to and
  // including the message (new message ids; the copy notes where it came from in a conversation.forked event).
  router.post('/conversations/:id/fork', async (req, res) => {
    const { principal, row, handle } = await owned(req, res);
    const { messageId } = parseBody(ForkBody, req.body);
    await countRequest(pool, principal.user, 'conversations', config.USER_NEW_CONVERSATIONS_PER_MINUTE);
    const path = await asUser(pool, principal.user, (db) => readPathTo(db, row.id, messageId));
    if (!path.length) throw new HttpError(404, 'No such message in this conversation');
    const id = randomUUID();
    const title = forkTitle(row.title);
    const kernel = catalog.agent(row.agent).kernel;
    // a stateful agent starts from its state at the fork point (the newest answer on the path that has one)
    const snapshot = kernel
      ? await asUser(pool, principal.user, (db) =>
          stateOnPath(
            db,
            row.id,
            path.map((message) => message.id),
          ),
        )
      : undefined;
    const carried = {
      turns: path.filter((message) => message.role === 'user').length,
      usage: emptyUsage(),
      rejectedSignals: 0,
      ...(kernel ? { agentState: resumed(kernel, snapshot ? snapshot.state : await stateOfRun(handle, kernel)) } : {}),
    };
    noteConversation(res, { conversationId: id, agent: row.agent, userId: principal.user });
    // one transaction: the copy commits with the row, and a failed start rolls both back
    const workflowId = await asUser(pool, principal.user, async (db) => {
      const ids = new Map(path.map((message) => [message.id, randomUUID()]));
      const copies = path.map(({ parentId: _parent, ...message }) => ({ ...message, id: ids.get(message.id)! }));
      const copy = async () => {
        await writeBatch(
          db,
          { conversationId: id, userId: principal.user },
          { messages: copies, events: [{ key: 'forked', type: 'conversation.forked', data: { conversationId: row.id, messageId } }] },
        );
      };
      const started = await startConversation(
        { catalog, config, client },
        db,
        { id, userId: principal.user, agent: row.agent, title, ...(row.client ? { client: row.client } : {}), carried },
        copy,
      );
      return started;
    });
    res.status(201).json({ id, agent: row.agent, workflowId });
  });

  router.get('/conversations', async (req, res) => {
    const principal = principalOf(res);
    const { cursor, limit, q } = parseBody(ListQuery, req.query);
    const rows = await asUser(pool, principal.user, (db) => listByActivity(db, { limit, after: cursor, search: q }));
    const page = rows.slice(0, limit);
    res.json({
      conversations: page.map(({ id, agent, workflowId, title, createdAt, lastActivityAt, matched }) => ({
        id,
        agent,
        workflowId,
        title,
        createdAt,
        lastActivityAt,
        ...(matched !== null && q !== undefined ? { match: searchSnippet(matched, q) } : {}),
      })),
      nextCursor: rows.length > limit ? encodeCursor(page.at(-1)!.position) : null,
    });
  });

  router.get('/conversations/:id', async (req, res) => {
    const { principal, row, handle } = await owned(req, res);
    res.json(await conversationViewOf(principal.user, row, handle));
  });

  /** GET's view: the current branch (each message with siblings says where it stands), pending items, status and usage. */
  async function conversationViewOf(userId: string, row: ConversationRow, handle: WorkflowHandle<ChatSession>) {
    // The state first, then the rows: a query waits for the workflow task in flight (a model step runs within
    // it), and the rows read after it hold at least what that task wrote, so an idle turn shows its messages.
    const state = await liveState(handle);
    const stored = await asUser(pool, userId, async (db) => ({
      messages: await readBranchView(db, row.id),
      usage: await readConversationUsage(db, row.id, config.BUDGET_CURRENCY),
      ledger: await readLedgerTotals(db, row.id, config.BUDGET_CURRENCY),
      summary: await latestSummary(db, row.id),
    }));
    const budget = hasBudget(config) ? budgetView(config, stored.ledger, state?.budgetRaises ?? 0) : undefined;
    return {
      id: row.id,
      agent: row.agent,
      title: row.title,
      workflowId: row.workflowId,
      createdAt: row.createdAt,
      status: state?.status ?? 'interrupted',
      messages: stored.messages,
      // the transcript is whole; the model reads a summary of it up to throughMessageId (GET .../context-summary)
      context: {
        summarized: stored.summary !== undefined,
        ...(stored.summary ? { throughMessageId: stored.summary.throughMessageId } : {}),
      },
      // an interrupted run's open items are closed in words when its next message revives it
      pending: state?.pending ?? [],
      usage: { ...stored.usage, cost: { amount: stored.usage.cost, currency: config.BUDGET_CURRENCY } },
      ...(budget ? { budget } : {}),
      ...(state?.held ? { held: state.held } : {}),
      // a stateful agent's view of its state (sous: recipe, defaults, pendingPatchSet, …)
      ...(state?.agentState ?? {}),
    };
  }

  /**
   * The run's state, or undefined when the run will not answer (ended, gone or stuck): then the view is
   * PostgreSQL's alone. A query of a run that ended mid-turn answers that turn's "running" for good, so a
   * running state is checked against the run's description too.
   */
  async function liveState(handle: WorkflowHandle<ChatSession>) {
    const interrupted = async () => {
      const health = await runHealth(handle).catch(() => undefined);
      return health !== undefined && health.state !== 'running';
    };
    try {
      const state = await withinDeadline(client, () => handle.query(stateQuery));
      return state.status === 'running' && (await interrupted()) ? undefined : state;
    } catch (error) {
      if (await interrupted()) return undefined;
      throw error;
    }
  }

  // What the agent's model reads instead of the conversation's older messages (issue 44): its latest summary.
  router.get('/conversations/:id/context-summary', async (req, res) => {
    const { principal, row } = await owned(req, res);
    const summary = await asUser(pool, principal.user, (db) => latestSummary(db, row.id));
    if (!summary) throw new HttpError(404, 'This conversation has no summary: its model reads all of it.');
    res.json({ text: summary.text, throughMessageId: summary.throughMessageId, version: summary.version, createdAt: summary.createdAt });
  });

  router.patch('/conversations/:id', async (req, res) => {
    const { principal, row } = await owned(req, res);
    const { title } = parseBody(RenameBody, req.body);
    await asUser(pool, principal.user, async (db) => {
      if (!(await renameConversation(db, row.id, title))) throw notFound();
      // the conversation's open pages (other tabs too) read the new title from its event stream
      await writeBatch(
        db,
        { conversationId: row.id, userId: principal.user },
        { events: [{ key: `title:${randomUUID()}`, type: 'title.changed', data: { title } }] },
      );
    });
    res.json({ id: row.id, title });
  });

  /**
   * A turn-shaped Update (a message or a decision). With an Idempotency-Key the key and the body's hash are
   * recorded per conversation before Temporal is called, so a key reused with another body is a 422; the
   * key is also the Update's id, so a retry during the turn joins it, and the recorded outcome answers a
   * retry after it (even once the workflow has continued as new and forgotten its update ids).
   */
  async function turnUpdate<S extends z.ZodType>(
    req: Request,
    res: Response,
    route: 'messages' | 'decisions' | 'messages/:messageId/edit' | 'messages/:messageId/regenerate',
    schema: S,
    run: (handle: WorkflowHandle<ChatSession>, body: z.infer<S>, updateId: string | undefined) => Promise<unknown>,
  ): Promise<void> {
    const { principal, row, handle } = await owned(req, res);
    const body = parseBody(schema, req.body);
    await countRequest(pool, principal.user, 'turns', config.USER_TURNS_PER_MINUTE);
    const key = idempotencyKey(req);
    const record = key && { userId: principal.user, scope: `conversation:${row.id}`, key };
    if (record) {
      const hash = requestHash(`POST /v1/conversations/:id/${route}`, body);
      const first = await asUser(pool, principal.user, (db) => claimIdempotencyKey(db, { ...record, requestHash: hash }));
      if (first && first.requestHash !== hash) throw keyReused();
      if (first?.response != null) {
        res.setHeader('Idempotent-Replayed', 'true');
        res.status(first.status ?? 200).json(first.response);
        return;
      }
    }
    // A conversation whose run has ended, is gone or is wedged is brought back from PostgreSQL (revival.ts);
    // one deleted while its turn ran is not: the server fails the accepted update once DELETE terminated it.
    const text = route === 'messages' ? (body as { text?: string }).text : undefined;
    const result = await withRevival({ catalog, config, client, pool, log }, row, text, () =>
      run(handle, body, key).catch(async (error: unknown) => {
        if (!(error instanceof WorkflowUpdateFailedError) || isRefusal(error.cause)) throw error;
        throw (await deletedMeanwhile(client, config.TEMPORAL_NAMESPACE, handle)) ? conversationGone() : error;
      }),
    );
    if (record) {
      // The answer is already decided; failing to record it only means a later retry asks Temporal again.
      await asUser(pool, principal.user, (db) =>
        recordIdempotentResponse(db, { ...record, status: 200, response: storableJson(result) }),
      ).catch((error: unknown) =>
        log(`Could not record the outcome of Idempotency-Key ${key} (request ${String(res.locals.requestId)})`, error),
      );
    }
    res.json(result);
  }

  router.post('/conversations/:id/messages', (req, res) =>
    turnUpdate(req, res, 'messages', MessageBody, (handle, body, updateId) =>
      handle.executeUpdate(sendMessageUpdate, { args: [body], updateId }),
    ),
  );

  /** A message of this conversation (404 otherwise, as for a message of another's). */
  async function messageOf(userId: string, conversationId: string, messageId: string) {
    const message = await asUser(pool, userId, (db) => findTreeMessage(db, conversationId, messageId));
    if (!message) throw new HttpError(404, 'No such message in this conversation');
    return message;
  }

  // Edit: a sibling of the user message with the new text, and a turn from there (issue 45).
  router.post('/conversations/:id/messages/:messageId/edit', (req, res) =>
    turnUpdate(req, res, 'messages/:messageId/edit', EditBody, async (handle, body, updateId) => {
      const message = await messageOf(principalOf(res).user, String(req.params.id), String(req.params.messageId));
      if (message.role !== 'user') throw new HttpError(422, 'Only a user message can be edited; regenerate an answer instead');
      return handle.executeUpdate(branchTurnUpdate, { args: [{ kind: 'edit', at: message.parentId, text: body.text }], updateId });
    }),
  );

  // Regenerate: the turn runs again from the user message before the answer; the new answer is its sibling.
  router.post('/conversations/:id/messages/:messageId/regenerate', (req, res) =>
    turnUpdate(req, res, 'messages/:messageId/regenerate', RegenerateBody, async (handle, _body, updateId) => {
      const conversationId = String(req.params.id);
      const userId = principalOf(res).user;
      const message = await messageOf(userId, conversationId, String(req.params.messageId));
      if (message.role !== 'assistant') throw new HttpError(422, 'Only an answer can be regenerated; edit a user message instead');
      const asked = (await asUser(pool, userId, (db) => readPathTo(db, conversationId, message.id))).findLast((m) => m.role === 'user');
      if (!asked) throw new HttpError(422, 'This answer has no user message before it to answer again');
      return handle.executeUpdate(branchTurnUpdate, { args: [{ kind: 'regenerate', at: asked.id }], updateId });
    }),
  );

  // Branch: the branch through leafId becomes current, at its newest message; answers the conversation's view.
  router.post('/conversations/:id/branch', async (req, res) => {
    const { principal, row, handle } = await owned(req, res);
    const { leafId } = parseBody(BranchBody, req.body);
    await countRequest(pool, principal.user, 'turns', config.USER_TURNS_PER_MINUTE);
    await messageOf(principal.user, row.id, leafId);
    await handle.executeUpdate(switchBranchUpdate, { args: [{ messageId: leafId }] });
    res.json(await conversationViewOf(principal.user, row, handle));
  });

  router.post('/conversations/:id/decisions', async (req, res) => {
    const approver = config.BUDGET_APPROVER_ROLE;
    if (approver) {
      // someone else's conversation: an approver may decide its budget item, and only that
      const principal = principalOf(res);
      const mine = await asUser(pool, principal.user, (db) => findConversation(db, String(req.params.id)));
      if (!mine) {
        res.json(await approverDecision(client, approver, principal, String(req.params.id), parseBody(DecisionBody, req.body)));
        return;
      }
    }
    await turnUpdate(req, res, 'decisions', DecisionBody, async (handle, body, updateId) => {
      if (approver) await withinDeadline(client, () => refuseSelfApproval(approver, handle, body));
      return handle.executeUpdate(decideUpdate, { args: [body], updateId });
    });
  });

  router.get('/conversations/:id/events', async (req, res) => {
    const { principal, row } = await owned(req, res);
    const lease = await openStreamLease(pool, principal.user, config.USER_EVENT_STREAMS);
    // given back as soon as the client goes, not when the stream next notices (its keepalive)
    res.once('close', () => void lease.release());
    try {
      await streamEvents(req, res, { pool, notifier, userId: principal.user, conversationId: row.id });
    } finally {
      await lease.release();
    }
  });

  return router;
}

const QUICK_CALL_MS = 5_000;

/** A state taken up elsewhere (a fork) as its kernel says (what it waited on stays behind). */
const resumed = (kernel: AgentKernel, state: unknown) => (kernel.resume ? kernel.resume(state, state) : state);

/** A fork's title: its conversation's, marked, within the 200 characters a title may have. */
const forkTitle = (title: string) => `${title.slice(0, 190)} (fork)`;

const isRefusal = (cause: unknown) => cause instanceof ApplicationFailure && !!cause.type && cause.type in FAILURE_STATUS;

/** The reason Temporal's DeleteWorkflowExecution gives the run it terminates (the server's own words). */
const DELETION_REASON = 'Delete workflow execution';

/**
 * Whether a turn that failed did so because its conversation was deleted meanwhile: DELETE removes the workflow
 * (the server terminates a running one in its own words), then the rows, so the run is gone or terminated for
 * deletion (and a retry would 404). An operator's terminate is not a deletion: that run is revived instead.
 */
async function deletedMeanwhile(client: Client, namespace: string, handle: WorkflowHandle): Promise<boolean> {
  try {
    const { status, runId } = await withinDeadline(client, () => handle.describe());
    if (status.name !== 'TERMINATED') return false;
    const { history } = await withinDeadline(client, () =>
      client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace,
        execution: { workflowId: handle.workflowId, runId },
        maximumPageSize: 1,
      }),
    );
    return history?.events?.[0]?.workflowExecutionTerminatedEventAttributes?.reason === DELETION_REASON;
  } catch (error) {
    return error instanceof WorkflowNotFoundError || (error as { code?: number }).code === 5;
  }
}

/**
 * Calls that should answer at once get a deadline, so a Temporal outage is a prompt 503 rather than
 * the client's retries running on. Turns are not bounded this way: they wait for the model and tools.
 */
function withinDeadline<T>(client: Client, fn: () => Promise<T>): Promise<T> {
  return client.withDeadline(Date.now() + QUICK_CALL_MS, fn);
}
