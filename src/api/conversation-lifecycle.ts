// A conversation's turn control and whole life, beside the routes that run its turns (conversations.ts):
// Stop, delete and export. Generic: nothing here names an agent.
import { conversationFilesPrefix } from '../shared/conversation-files.ts';
import { createObjectStore } from '../storage/index.ts';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Router, type Request, type Response } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { ConversationRow } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import { announceStop } from '../db/stop-notice.ts';
import { readTree } from '../db/conversation-tree.ts';
import { stopUpdate } from '../shared/definitions.ts';
import { type ChatMessage, ChatMessage as ChatMessageSchema } from '../shared/messages.ts';
import { plainText } from '../shared/safe-text.ts';
import type { ChatSession } from '../workflows/chat-session.ts';
import { deleteExecutions } from '../protection/temporal-executions.ts';
import type { ConversationAccess } from './conversation-access.ts';
import { parseBody } from './http-error.ts';
import { lockConversationRuns, runHealth } from './revival.ts';

export interface LifecycleDeps {
  access: ConversationAccess;
  config: Config;
  client: Client;
  pool: pg.Pool;
  log?: (line: string, error?: unknown) => void;
}

export const ExportQuery = z.object({ format: z.enum(['json', 'markdown']).default('json') });

export const StopResultBody = z.object({
  stopped: z.boolean(),
  /** the run has ended or is stuck: nothing runs to stop, and the next message revives the conversation */
  status: z.literal('interrupted').optional(),
});

/** The JSON export's shape, for the OpenAPI document. */
export const ExportBody = z.object({
  conversation: z.object({ id: z.uuid(), agent: z.string(), title: z.string(), workflowId: z.string(), createdAt: z.string() }),
  exportedAt: z.string(),
  /** every message of every branch, in the order they were written, each with its parent (null: a first message) */
  messages: z.array(ChatMessageSchema.extend({ parentId: z.string().nullable() })),
  /** the current branch's newest message: its path from the first message is the current branch */
  leafId: z.string().nullable(),
  toolCalls: z.array(z.object({ callId: z.string(), tool: z.string(), args: z.unknown(), result: z.unknown(), createdAt: z.string() })),
  decisions: z.array(z.object({ id: z.number(), type: z.string(), data: z.unknown(), createdAt: z.string() })),
});

/** What an export holds: the transcript, every tool call's record and every decision (pending items). */
export interface ConversationExport {
  conversation: Pick<ConversationRow, 'id' | 'agent' | 'title' | 'workflowId' | 'createdAt'>;
  exportedAt: string;
  /** every branch's messages in the order they were written (the conversation is a tree: parentId) */
  messages: (ChatMessage & { parentId?: string | null })[];
  /** the current leaf; absent, the messages are one branch as they are */
  leafId?: string | null;
  toolCalls: { callId: string; tool: string; args: unknown; result: unknown; createdAt: string }[];
  /** pending.opened, pending.closed and turn.stopped events, oldest first */
  decisions: { id: number; type: string; data: unknown; createdAt: string }[];
}

export function lifecycleRoutes({ access, config, client, pool, log = () => undefined }: LifecycleDeps): Router {
  const router = Router();

  /** The caller's conversation, or 404 whether it is missing or someone else's; 403 without its agent's role. */
  async function owned(req: Request, res: Response) {
    const { principal, row } = await access.authorizedConversation(res, String(req.params.id));
    return { principal, row, handle: client.workflow.getHandle(row.workflowId) as WorkflowHandle<ChatSession> };
  }

  // Stop goes through Temporal (an Update), so any API process can stop a turn another one started. The
  // Update waits for the workflow task a model step runs in: the notice first, which stops that step at once.
  router.post('/conversations/:id/stop', async (req, res) => {
    const { row, handle } = await owned(req, res);
    const [health] = await Promise.all([
      runHealth(handle).catch(() => undefined),
      announceStop(pool, { conversationId: row.id, requestedAt: Date.now() }).catch(() => undefined),
    ]);
    // a run that ended or is stuck would never answer the Update: nothing of it runs, so there is nothing to stop
    if (health && health.state !== 'running') return void res.json({ stopped: false, status: 'interrupted' });
    res.json(await handle.executeUpdate(stopUpdate));
  });

  router.delete('/conversations/:id', async (req, res) => {
    const { principal, row } = await owned(req, res);
    // under the revival lock: a turn cut off by the deletion must not bring the conversation back in between
    await asUser(pool, principal.user, async (db) => {
      await lockConversationRuns(db, row.id);
      // Temporal first: a failure here leaves the conversation whole, and a retried DELETE finishes the job.
      await deleteExecutions(client, config.TEMPORAL_NAMESPACE, row.workflowId, log);
      // its files before its rows: until the rows go, a retried DELETE still finds the conversation
      await createObjectStore(config).deletePrefix(conversationFilesPrefix(row.id));
      await db.query('SELECT brigade_delete_conversation($1, $2)', [principal.user, row.id]);
    });
    res.status(204).end();
  });

  router.get('/conversations/:id/export', async (req, res) => {
    const { format } = parseBody(ExportQuery, req.query);
    const { principal, row } = await owned(req, res);
    const exported = await asUser(pool, principal.user, (db) => readExport(db, row));
    const name = `conversation-${row.id}`;
    if (format === 'markdown') {
      res.setHeader('Content-Disposition', `attachment; filename="${name}.md"`);
      res.type('text/markdown; charset=utf-8').send(toMarkdown(exported));
      return;
    }
    res.setHeader('Content-Disposition', `attachment; filename="${name}.json"`);
    res.json(exported);
  });

  return router;
}

export async function readExport(db: pg.ClientBase, row: ConversationRow): Promise<ConversationExport> {
  // One after another: a connection runs one query at a time (pg queues them, and pg 9 will refuse to).
  const { messages, leafId } = await readTree(db, row.id);
  const calls = await db.query(
    `SELECT call_id AS "callId", tool, args, result, created_at AS "createdAt" FROM tool_calls WHERE conversation_id = $1 ORDER BY created_at, call_id`,
    [row.id],
  );
  const decisions = await db.query(
    // each event's place in the conversation (as the event stream numbers it), not the table's global id
    `SELECT id::int, type, data, "createdAt" FROM (
        SELECT row_number() OVER (ORDER BY id) AS id, type, data, created_at AS "createdAt" FROM events WHERE conversation_id = $1
      ) numbered WHERE type IN ('pending.opened', 'pending.closed', 'turn.stopped') ORDER BY id`,
    [row.id],
  );
  const { id, agent, title, workflowId, createdAt } = row;
  return {
    conversation: { id, agent, title, workflowId, createdAt },
    exportedAt: new Date().toISOString(),
    messages,
    leafId,
    toolCalls: calls.rows,
    decisions: decisions.rows,
  };
}

/**
 * A fenced block that its content cannot close: the fence is one backtick longer than the longest run of
 * backticks inside (CommonMark), so text a model, a tool or a user wrote stays text, never the document's
 * structure (no forged "## User" or tool result after a fence it closed).
 */
export function fenced(text: string, info = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${info}\n${text}\n${fence}`;
}

const json = (value: unknown) => fenced(JSON.stringify(value, null, 2) ?? 'null', 'json');
/** a code span its content cannot close, on one line (a model may call a tool by any name) */
const inlineCode = (text: string) => {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks} ${oneLine(text)} ${ticks}`;
};
/** one line of plain text: no line breaks (a title cannot start a heading of its own) */
const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, ' ');
/**
 * Text outside a fence (the title, a model-chosen call id, a decision's reason) as literal text: one plain line
 * with every ASCII punctuation character backslash-escaped (CommonMark escapes any of them), so no `![](…)`
 * remote image, link, emphasis, HTML tag or entity in it is live. A title stored before titles were made
 * plain still loses its invisible characters here.
 */
export const literal = (text: string) => plainText(text).replace(/[!-/:-@[-`{-~]/g, '\\$&');

/**
 * The current branch of an exported tree, from the first message to the leaf, and for each of its messages the
 * other versions of it (its siblings off the branch). An export without a leaf is one branch as it is.
 */
function currentBranch(exported: ConversationExport): {
  branch: ConversationExport['messages'];
  others: Map<string, ConversationExport['messages']>;
} {
  const { messages, leafId } = exported;
  if (leafId === undefined) return { branch: messages, others: new Map() };
  const byId = new Map(messages.map((message) => [message.id, message]));
  const branch: ConversationExport['messages'] = [];
  for (let at = leafId === null ? undefined : byId.get(leafId); at; at = at.parentId ? byId.get(at.parentId) : undefined)
    branch.unshift(at);
  const on = new Set(branch.map((message) => message.id));
  const others = new Map<string, ConversationExport['messages']>();
  for (const message of branch) {
    const siblings = messages.filter((other) => !on.has(other.id) && other.parentId === message.parentId);
    if (siblings.length) others.set(message.id, siblings);
  }
  return { branch, others };
}

/** A message's first line, short, as literal text: how the Markdown export names another branch. */
const opening = (text: string) => literal(text.length > 80 ? `${text.slice(0, 80)}…` : text) || '(no text)';

/**
 * The export as a document a person reads: the current branch's messages in order, tool calls with their arguments
 * and results, and under a message that has other versions (an edit, a regenerated answer) the branches they start.
 */
export function toMarkdown(exported: ConversationExport): string {
  const { conversation } = exported;
  const { branch, others } = currentBranch(exported);
  const branches = [...others.values()].reduce((count, siblings) => count + siblings.length, 0);
  const lines = [
    `# ${literal(conversation.title)}`,
    '',
    `Conversation ${conversation.id} with the ${conversation.agent} agent, started ${conversation.createdAt}; exported ${exported.exportedAt}.`,
    '',
    ...(branches
      ? [
          `This is the current branch; ${branches === 1 ? '1 other branch is' : `${branches} other branches are`} named below the message it starts from, and in the JSON export.`,
          '',
        ]
      : []),
  ];
  const closed = new Map<string, Record<string, unknown>>();
  for (const event of exported.decisions) {
    const data = event.data as Record<string, unknown>;
    if (event.type === 'pending.closed') closed.set(String(data.id), data);
  }
  for (const message of branch) {
    if (message.role === 'user') lines.push(`## User`, '', fenced(message.text, 'text'), '');
    else if (message.role === 'assistant') {
      lines.push(`## Assistant${message.stopped ? ' (stopped)' : ''}`, '', message.text ? fenced(message.text, 'text') : '_(no text)_', '');
      for (const call of message.toolCalls ?? [])
        lines.push(`Calls ${inlineCode(call.name)} (${literal(call.id)}):`, '', json(call.args), '');
    } else {
      lines.push(
        `### Tool result: ${inlineCode(message.tool ?? 'tool')} (${literal(message.callId ?? message.id)})`,
        '',
        json(message.result ?? message.text),
        '',
      );
    }
    const versions = others.get(message.id);
    if (versions)
      lines.push(
        `Other versions of this message (each starts a branch not shown here):`,
        '',
        ...versions.map((other) => `- ${literal(other.id)}: ${opening(other.text)}`),
        '',
      );
  }
  const opened = exported.decisions.filter((event) => event.type === 'pending.opened');
  if (opened.length) {
    lines.push('## Decisions', '');
    for (const event of opened) {
      const item = event.data as Record<string, unknown>;
      const outcome = closed.get(String(item.id));
      const how = outcome
        ? `${String(outcome.decision)} (${String(outcome.closedAs)}${outcome.reason ? `: ${String(outcome.reason)}` : ''})`
        : 'open';
      lines.push(
        `- ${literal(String(item.kind))} for ${inlineCode(String(item.tool))} ${inlineCode(JSON.stringify(item.args) ?? '')}: ${literal(how)}`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}
