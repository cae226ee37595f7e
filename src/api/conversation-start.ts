// A new conversation: its row and its workflow, started inside the caller's transaction (the row's), so a failed
// start rolls the row back. One path for POST /v1/conversations and a schedule's run into a new conversation
// (schedule-runs.ts), so both start the same input, search attributes and memo.
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { insertConversation } from '../db/conversations.ts';
import { noteWorkflowOwner } from '../protection/person-keys.ts';
import { userSearchAttributes } from '../protection/user-digest.ts';
import { CHAT_SESSION_TASK_TIMEOUT, chatSessionWorkflowId } from '../shared/definitions.ts';
import type { AgentName, ChatSessionInput } from '../shared/messages.ts';
import type { JsonObject } from '../shared/messages.ts';
import { AGENT_KEY, WAITING_KEY } from '../shared/search-attributes.ts';
import type { ChatSession } from '../workflows/chat-session.ts';
import { mcpInput } from '../mcp/config.ts';
import type { ServerCatalog } from './agent-server.ts';
import { sessionSettings } from './session-settings.ts';

export interface NewConversation {
  id: string;
  userId: string;
  agent: AgentName;
  /** none: `<agent> conversation`, and the first exchange names it */
  title?: string;
  client?: string;
  /** the agent's own start state (AgentServer.create.init) */
  init?: JsonObject;
  /** a fork's: what its run takes over from the path it copies (turns, the agent's state there) */
  carried?: ChatSessionInput['carried'];
}

const QUICK_CALL_MS = 5_000;

/**
 * Inserts the row and starts the workflow, in `db`'s transaction; answers the workflow's id. `beforeStart` writes
 * what must be there with the row (a fork's copied messages), so its failure starts nothing.
 */
export async function startConversation(
  { catalog, config, client }: { catalog: ServerCatalog; config: Config; client: Client },
  db: pg.ClientBase,
  conversation: NewConversation,
  beforeStart?: () => Promise<void>,
): Promise<string> {
  const { id, userId, agent } = conversation;
  const workflowId = chatSessionWorkflowId(id);
  const title = conversation.title ?? `${agent} conversation`;
  const input: ChatSessionInput = {
    conversationId: id,
    userId,
    agent,
    title,
    // no title given: the first exchange makes one
    ...(conversation.title === undefined ? { autoTitle: true } : {}),
    client: conversation.client,
    settings: sessionSettings(config, catalog),
    ...mcpInput(config.BRIGADE_MCP_CONFIG, catalog, agent),
    ...(conversation.init ? { init: conversation.init } : {}),
    ...(conversation.carried ? { carried: conversation.carried } : {}),
  };
  // the row commits after the start: the codec learns the owner here, to seal the start under their data key
  noteWorkflowOwner(workflowId, userId);
  await insertConversation(db, { id, userId, agent, client: conversation.client ?? null, title, workflowId });
  await beforeStart?.();
  // a deadline: a Temporal outage is a prompt failure rather than the client's retries running on
  await client.withDeadline(Date.now() + QUICK_CALL_MS, () =>
    client.workflow.start<ChatSession>('chatSession', {
      workflowId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
      workflowTaskTimeout: CHAT_SESSION_TASK_TIMEOUT,
      typedSearchAttributes: [{ key: AGENT_KEY, value: agent }, ...userSearchAttributes(userId), { key: WAITING_KEY, value: false }],
      memo: { title },
      staticSummary: `${agent}: ${title}`,
    }),
  );
  return workflowId;
}
