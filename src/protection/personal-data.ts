// What Brigade holds of one person, as a list of kinds that each can export and erase it: GET /v1/me/export
// gathers every kind's export, DELETE /v1/me (and the operator's DELETE /v1/users/{user}) runs every kind's
// erase. The runtime's kinds are built in (src/api/personal-data-routes.ts), each agent adds its own
// (AgentServer.personalData), and anything else that keeps data of a user registers here (registerPersonalData),
// so that a new table cannot be forgotten by erasure without being forgotten by its own module.
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { asUser } from '../db/pool.ts';
import { conversationFilesPrefix } from '../shared/conversation-files.ts';
import type { ObjectStore } from '../storage/index.ts';
import { deleteExecutions } from './temporal-executions.ts';

export interface PersonalDataContext {
  /** the person (the user id of their tokens) */
  user: string;
  config: Config;
  pool: pg.Pool;
  client: Client;
  store: ObjectStore;
  log: (line: string, error?: unknown) => void;
}

export interface PersonalDataKind {
  /** the export's field for it, and the erasure report's */
  name: string;
  /** everything of the person, as JSON; absent when the kind holds nothing worth giving back (keys, caches) */
  export?(ctx: PersonalDataContext): Promise<unknown>;
  /** erases everything of the person, idempotently (a retried erasure finishes the job); returns how many things went */
  erase(ctx: PersonalDataContext): Promise<number>;
  /** erased before (lower) or after (higher) the others; conversations are 100, so a kind that needs their rows runs before */
  order?: number;
}

const registered: PersonalDataKind[] = [];

/** Adds a kind of personal data (API keys, a new table of users' things); its name must be new. */
export function registerPersonalData(kind: PersonalDataKind): void {
  if (registered.some((other) => other.name === kind.name)) throw new Error(`personal data "${kind.name}" is registered twice`);
  registered.push(kind);
}

export function registeredPersonalData(): readonly PersonalDataKind[] {
  return registered;
}

/** Every kind in erasure order (stable: equal orders keep the order they were given in). */
export function inErasureOrder(kinds: readonly PersonalDataKind[]): PersonalDataKind[] {
  const names = new Set<string>();
  for (const kind of kinds) {
    if (names.has(kind.name)) throw new Error(`personal data "${kind.name}" is listed twice`);
    names.add(kind.name);
  }
  return [...kinds].sort((a, b) => (a.order ?? 100) - (b.order ?? 100));
}

export async function exportPerson(ctx: PersonalDataContext, kinds: readonly PersonalDataKind[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const kind of kinds) if (kind.export) out[kind.name] = await kind.export(ctx);
  return out;
}

/**
 * Erases every kind, fenced (db/migrations/043_erasure_fence.sql): the fence commits before the first
 * delete, so a write still in flight (a model call's settlement, a title, a request signed in a moment
 * before) is dropped or refused instead of putting the person back; it is lifted for new data only once
 * every kind is erased. A failure leaves it up until a retried erasure finishes.
 */
export async function erasePerson(ctx: PersonalDataContext, kinds: readonly PersonalDataKind[]): Promise<Record<string, number>> {
  const ordered = inErasureOrder(kinds);
  await asUser(ctx.pool, ctx.user, (db) => db.query('SELECT brigade_fence_person($1)', [ctx.user]));
  const report: Record<string, number> = {};
  for (const kind of ordered) report[kind.name] = await kind.erase(ctx);
  await asUser(ctx.pool, ctx.user, (db) => db.query('SELECT brigade_person_erased($1)', [ctx.user]));
  return report;
}

/**
 * One conversation, everywhere: its Temporal executions (deleted, with its children and earlier runs), its
 * files, then its rows (usage kept as anonymous totals). In that order, so a failure leaves it findable and a
 * retry finishes the job.
 */
export async function eraseConversation(
  ctx: Omit<PersonalDataContext, 'user'>,
  conversation: { user: string; id: string; workflowId: string },
): Promise<void> {
  await deleteExecutions(ctx.client, ctx.config.TEMPORAL_NAMESPACE, conversation.workflowId, ctx.log);
  await ctx.store.deletePrefix(conversationFilesPrefix(conversation.id));
  await asUser(ctx.pool, conversation.user, (db) =>
    db.query('SELECT brigade_delete_conversation($1, $2)', [conversation.user, conversation.id]),
  );
}
