// A batch of writes in one round trip: messages that are new and their events (message, tool.call,
// tool.result), further events, a model call's usage row, a tool call's record. One SQL function
// (db/migrations/010_batch_writes.sql) writes them in one statement and acts for the user itself, so on
// the pool the batch needs no BEGIN, set_config or COMMIT; inside asUser it joins that transaction.
import type pg from 'pg';
import type { ChatMessage, JsonObject, NewEvent } from '../shared/messages.ts';
import { storableJson } from '../shared/safe-text.ts';
import { type MessageRow, rowToMessage } from './message-row.ts';
import { DEFER_COMMIT_SQL } from './commit-durability.ts';
import type { ConversationSummary } from './summaries.ts';
import { type LedgerSettlement, settleUsageArgs, settleUsageCall } from './usage-ledger.ts';

export interface ConversationKey {
  conversationId: string;
  userId: string;
}

export interface Batch {
  messages?: ChatMessage[];
  /** written after the messages' own events, in this order */
  events?: NewEvent[];
  /** a model call's usage row, keyed by its step */
  usage?: StepUsageRow;
  /** a tool call's record; unlike the rest it is not skipped when it exists (see run-tool) */
  toolCall?: ToolCallRow;
  /** the model call's settlement in the usage ledger, in the same transaction (a round trip less per call) */
  settle?: LedgerSettlement;
}

export interface StepUsageRow {
  stepId: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface ToolCallRow {
  callId: string;
  tool: string;
  args: JsonObject;
  result: unknown;
}

/** An event written only when the message it belongs to is (its first write, not a retry's). */
type BatchEvent = NewEvent & { of?: string };

function messageEvents(message: ChatMessage): BatchEvent[] {
  const of = message.id;
  const events: BatchEvent[] = [{ key: `message:${message.id}`, type: 'message', data: message, of }];
  for (const call of message.toolCalls ?? []) {
    events.push({ key: `tool-call:${call.id}`, type: 'tool.call', data: call, of });
  }
  if (message.role === 'tool') {
    events.push({
      key: `tool-result:${message.callId}`,
      type: 'tool.result',
      data: { callId: message.callId, tool: message.tool, result: message.result },
      of,
    });
  }
  return events;
}

// Client text was refused at the API if PostgreSQL cannot store it; what the model and tools produce is
// repaired here instead (NUL and unpaired surrogates become U+FFFD), so no reply can fail the write.
const jsonb = (value: unknown) => (value === undefined ? null : JSON.stringify(storableJson(value)));

function parameters({ conversationId, userId }: ConversationKey, batch: Batch) {
  const messages = batch.messages ?? [];
  const events: BatchEvent[] = [...messages.flatMap((message) => messageEvents(message)), ...(batch.events ?? [])];
  const toolCall = batch.toolCall && { ...batch.toolCall, result: batch.toolCall.result ?? null };
  return [userId, conversationId, jsonb(messages.map(toStoredMessage)), jsonb(events), jsonb(batch.usage), jsonb(toolCall)];
}

const WRITE_BATCH = 'brigade_write_batch($1, $2, $3, $4, $5, $6) AS inserted';

/** The batch's statements, each prepared once per connection: deferred or not, with the ledger's settlement or without. */
const BATCH_STATEMENTS = [false, true].flatMap((deferred) =>
  [false, true].map((settles) => {
    const columns = [WRITE_BATCH, ...(settles ? [`${settleUsageCall(7)} AS settled`] : []), ...(deferred ? [DEFER_COMMIT_SQL] : [])];
    return { name: `brigade.write_batch${settles ? '_settle' : ''}${deferred ? '_deferred' : ''}`, text: `SELECT ${columns.join(', ')}` };
  }),
);
const batchStatement = (deferred: boolean, settles: boolean) => BATCH_STATEMENTS[Number(deferred) * 2 + Number(settles)]!;
const WRITE_THEN_READ = {
  name: 'brigade.write_batch_read_transcript',
  text: 'SELECT * FROM brigade_write_batch_read_transcript($1, $2, $3, $4)',
};
const WRITE_THEN_READ_DEFERRED = {
  name: 'brigade.write_batch_read_transcript_deferred',
  // the function's rows keep their order (the transcript's) beside the one-row set_config
  text: `SELECT transcript.* FROM ${DEFER_COMMIT_SQL} AS deferred,
           brigade_write_batch_read_transcript($1, $2, $3, $4) WITH ORDINALITY AS transcript
         ORDER BY transcript.ordinality`,
};

export interface WriteOptions {
  /**
   * Commit without waiting for the log's flush (src/db/commit-durability.ts): only for a write that a later
   * durable one, or StepCommits.settle, makes durable before anyone relies on it. On a client inside a
   * transaction it applies to that whole transaction.
   */
  deferCommit?: boolean;
}

/**
 * Writes the batch on `db`: a pool (its own transaction, one round trip) or a client in a transaction
 * that acts for the same user. Returns the messages it inserted (none on a retry that finds them written).
 * A conversation that is not the user's is refused (insufficient_privilege).
 */
export async function writeBatch(db: pg.Pool | pg.ClientBase, key: ConversationKey, batch: Batch, options: WriteOptions = {}): Promise<ChatMessage[]> {
  const messages = batch.messages ?? [];
  if (!messages.length && !batch.events?.length && !batch.usage && !batch.toolCall && !batch.settle) return [];
  const statement = batchStatement(options.deferCommit === true, batch.settle !== undefined);
  const values = [...parameters(key, batch), ...(batch.settle ? settleUsageArgs(batch.settle) : [])];
  const { rows } = await db.query<{ inserted: string[] }>({ ...statement, values });
  const inserted = new Set(rows[0]!.inserted);
  return messages.filter((message) => inserted.has(message.id));
}

/** Writes the batch, then reads the whole transcript with it, in one transaction and one round trip. */
export async function writeBatchReadTranscript(
  db: pg.Pool | pg.ClientBase,
  key: ConversationKey,
  batch: Batch,
  options: WriteOptions = {},
): Promise<ChatMessage[]> {
  const [userId, conversationId, messages, events] = parameters(key, batch);
  const statement = options.deferCommit ? WRITE_THEN_READ_DEFERRED : WRITE_THEN_READ;
  const { rows } = await db.query<MessageRow>({ ...statement, values: [userId, conversationId, messages, events] });
  return rows.map(rowToMessage);
}

const WRITE_THEN_WINDOW = {
  name: 'brigade.write_batch_read_window',
  text: 'SELECT * FROM brigade_write_batch_read_window($1, $2, $3, $4, $5)',
};
const WRITE_THEN_WINDOW_DEFERRED = {
  name: 'brigade.write_batch_read_window_deferred',
  text: `SELECT w.* FROM ${DEFER_COMMIT_SQL} AS deferred,
           brigade_write_batch_read_window($1, $2, $3, $4, $5) WITH ORDINALITY AS w
         ORDER BY w.ordinality`,
};

/** What a model step reads of a conversation's current branch: the summary in force and the newest messages after it. */
export interface ReadWindow {
  summary?: ConversationSummary;
  /** oldest first: at most `limit` of the messages after the summary */
  messages: ChatMessage[];
  /** older messages after the summary were left unread (the limit was reached) */
  cut: boolean;
}

/**
 * Writes the batch, then reads the current branch's summary in force and at most `limit` of the newest messages
 * on the branch after it, in one transaction and one round trip: O(window) rows, not the whole transcript.
 */
export async function writeBatchReadWindow(
  db: pg.Pool | pg.ClientBase,
  key: ConversationKey,
  batch: Batch,
  limit: number,
  options: WriteOptions = {},
): Promise<ReadWindow> {
  const [userId, conversationId, messages, events] = parameters(key, batch);
  const statement = options.deferCommit ? WRITE_THEN_WINDOW_DEFERRED : WRITE_THEN_WINDOW;
  const { rows } = await db.query<Omit<MessageRow, 'role'> & { role: MessageRow['role'] | 'summary' }>({
    ...statement,
    values: [userId, conversationId, messages, events, limit],
  });
  // the summary in force on the branch, if any, is a row of its own after the messages (048_conversation_tree.sql)
  const row = rows.find((candidate) => candidate.role === 'summary');
  const summary = row ? { text: row.text, throughMessageId: row.id, ...(row.args as unknown as { version: number; tokens: number }) } : undefined;
  const read = rows.filter((candidate) => candidate.role !== 'summary') as MessageRow[];
  return { ...(summary ? { summary } : {}), messages: read.map(rowToMessage), cut: read.length >= limit };
}

/** An assistant reply cut short by Stop keeps that mark in its row's `result` column (unused by replies). */
function toStoredMessage(message: ChatMessage): ChatMessage {
  return message.role === 'assistant' && message.stopped ? { ...message, result: { stopped: true } } : message;
}
