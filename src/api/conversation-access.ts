// The one authorization rule of every route under /v1/conversations/:id (the generic ones and each agent's):
// the conversation is the caller's (row-level security: someone else's is a 404, like a missing one) and the
// caller holds the role its agent requires now. Tokens are read at start, so a role removed from API_TOKENS
// takes effect at the next start for every route alike: view, messages, decisions, events, stop, export,
// delete and the agents' own routes all come through here.
import type { Response } from 'express';
import type pg from 'pg';
import { type ConversationRow, findConversation } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import { AGENT_SPECS } from '../agents/registry.ts';
import type { AgentName } from '../shared/messages.ts';
import { type Principal, principalOf } from './auth.ts';
import { HttpError, notFound } from './http-error.ts';
import { noteConversation } from './metrics.ts';

/** 403 unless the principal holds the role the agent requires (if any). */
export function requireAgentRole(principal: Principal, agent: AgentName): void {
  const role = AGENT_SPECS[agent].requiredRole;
  if (role && !principal.roles.includes(role)) {
    throw new HttpError(403, `Only users with the "${role}" role may use the ${agent} agent`);
  }
}

/**
 * A conversation for a client (a bar) is the token's while the token still acts for it: its own client, or,
 * without one, the agent's client role (which may name any client). Checked on every route, as at creation.
 */
export function requireClientAccess(principal: Principal, agent: AgentName, client: string | null): void {
  const role = AGENT_SPECS[agent].clientRole;
  if (!role || !client) return;
  if (principal.client ? principal.client !== client : !principal.roles.includes(role)) {
    throw new HttpError(
      403,
      principal.client
        ? `This token acts for client "${principal.client}" only`
        : `Only users with the "${role}" role may act for a client of the ${agent} agent`,
    );
  }
}

/** The caller's conversation with this id, once the rule holds; throws 404 (missing or not theirs) or 403 (role, client). */
export async function authorizedConversation(
  pool: pg.Pool,
  res: Response,
  id: string,
): Promise<{ principal: Principal; row: ConversationRow }> {
  const principal = principalOf(res);
  const row = await asUser(pool, principal.user, (db) => findConversation(db, id));
  if (!row) throw notFound();
  noteConversation(res, { conversationId: row.id, agent: row.agent, userId: principal.user });
  requireAgentRole(principal, row.agent);
  requireClientAccess(principal, row.agent, row.client);
  return { principal, row };
}
