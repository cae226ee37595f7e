// What an activity knows about the conversation it works for, read from its input (every runtime activity
// takes conversationId, userId and agent), for the spans and metrics made deeper down (model, tools).
import { AsyncLocalStorage } from 'node:async_hooks';

export interface TurnContext {
  conversationId?: string;
  userId?: string;
  agent?: string;
  activity?: string;
}

const storage = new AsyncLocalStorage<TurnContext>();

export function runInTurnContext<T>(turn: TurnContext, fn: () => T): T {
  return storage.run(turn, fn);
}

export function turnContext(): TurnContext {
  return storage.getStore() ?? {};
}

/** The conversation fields of an activity's (or request's) first argument, when it has them. */
export function turnFields(input: unknown): TurnContext {
  if (!input || typeof input !== 'object') return {};
  const { conversationId, userId, agent } = input as Record<string, unknown>;
  return {
    ...(typeof conversationId === 'string' ? { conversationId } : {}),
    ...(typeof userId === 'string' ? { userId } : {}),
    ...(typeof agent === 'string' ? { agent } : {}),
  };
}

/** Span attribute names for a turn's conversation (brigade.*; the user is an id, not a name or an address). */
export function turnAttributes(turn: TurnContext): Record<string, string | undefined> {
  return {
    'brigade.conversation_id': turn.conversationId,
    'brigade.agent': turn.agent,
    'brigade.user': turn.userId,
    'enduser.id': turn.userId,
  };
}
