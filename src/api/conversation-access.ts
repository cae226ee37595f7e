// The one authorization rule of every route under /v1/conversations/:id (the generic ones and each agent's):
// the conversation is the caller's (row-level security: someone else's is a 404, like a missing one) and the
// caller holds the role its agent requires now. Tokens are read at start, so a role removed from API_TOKENS
// takes effect at the next start for every route alike: view, messages, decisions, events, stop, export,
// delete and the agents' own routes all come through here.
import type { Response } from 'express';
import type pg from 'pg';
import { type ConversationRow, findConversation } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import type { AgentName } from '../shared/messages.ts';
import { type Principal, principalOf } from './auth.ts';
import { HttpError, notFound } from './http-error.ts';
import { noteConversation } from './metrics.ts';

export interface ConversationAccess {
  /** 403 unless the principal holds the role the agent requires (if any) */
  requireAgentRole(principal: Principal, agent: AgentName): void;
  /**
   * A conversation for a client (a bar) is the token's while the token still acts for it: its own client, or,
   * without one, the agent's client role (which may name any client). Checked on every route, as at creation.
   */
  requireClientAccess(principal: Principal, agent: AgentName, client: string | null): void;
  /** The caller's conversation with this id, once the rule holds; throws 404 (missing or not theirs) or 403 (role, client). */
  authorizedConversation(res: Response, id: string): Promise<{ principal: Principal; row: ConversationRow }>;
}

/** The rule over the catalog's agents; the API makes one and hands it to every route module, the agents' too. */
export function conversationAccess(catalog: AgentCatalog, pool: pg.Pool): ConversationAccess {
  // a row whose agent the catalog no longer lists is nobody's to use
  const specOf = (agent: AgentName) => {
    if (!catalog.has(agent)) throw new HttpError(403, `The ${agent} agent is not served here`);
    return catalog.agent(agent);
  };
  const access: ConversationAccess = {
    requireAgentRole(principal, agent) {
      const role = specOf(agent).requiredRole;
      if (role && !principal.roles.includes(role)) {
        throw new HttpError(403, `Only users with the "${role}" role may use the ${agent} agent`);
      }
    },
    requireClientAccess(principal, agent, client) {
      const role = specOf(agent).clientRole;
      if (!role || !client) return;
      if (principal.client ? principal.client !== client : !principal.roles.includes(role)) {
        throw new HttpError(
          403,
          principal.client
            ? `This token acts for client "${principal.client}" only`
            : `Only users with the "${role}" role may act for a client of the ${agent} agent`,
        );
      }
    },
    async authorizedConversation(res, id) {
      const principal = principalOf(res);
      const row = await asUser(pool, principal.user, (db) => findConversation(db, id));
      if (!row) throw notFound();
      noteConversation(res, { conversationId: row.id, agent: row.agent, userId: principal.user });
      access.requireAgentRole(principal, row.agent);
      access.requireClientAccess(principal, row.agent, row.client);
      return { principal, row };
    },
  };
  return access;
}
