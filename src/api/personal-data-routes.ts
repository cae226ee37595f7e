// A person's data as a whole (issue 35): GET /v1/me/export gives everything of theirs as JSON, DELETE /v1/me
// erases it; an operator does the same for a given user (GET /v1/users/{user}/export, DELETE /v1/users/{user}).
// The kinds of data are a list (src/protection/personal-data.ts): the runtime's here, each agent's from its
// server side, and whatever else registers.
import type { Client } from '@temporalio/client';
import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import type { ServerCatalog } from './agent-server.ts';
import type { Config } from '../config.ts';
import { type ConversationRow, listConversations } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import {
  type PersonalDataContext,
  type PersonalDataKind,
  eraseConversation,
  erasePerson,
  exportPerson,
  registeredPersonalData,
} from '../protection/personal-data.ts';
import { dataKeyKind, tableFilesKind } from '../protection/crypto-shredding.ts';
import { deleteExecutionsOfUser } from '../protection/temporal-executions.ts';
import { schedulesKind } from '../schedules/personal-data.ts';
import { createObjectStore } from '../storage/index.ts';
import { principalOf } from './auth.ts';
import { OPERATOR_ROLE } from './codec-server.ts';
import { readExport } from './conversation-lifecycle.ts';
import { HttpError, parseBody } from './http-error.ts';
import { requireScope } from './key-scopes.ts';
import { mcpConnectionsKind } from './mcp-oauth.ts';

const ALL = 1_000_000;

/** The runtime's conversations: each one's export (transcript, tool calls, decisions) and, on erasure, everything of it. */
const conversations: PersonalDataKind = {
  name: 'conversations',
  order: 100,
  async export({ pool, user }) {
    return asUser(pool, user, async (db) => {
      const rows = await listConversations(db, ALL);
      const out = [];
      for (const row of rows) out.push(await readExport(db, row));
      return out;
    });
  },
  async erase(ctx) {
    const rows: ConversationRow[] = await asUser(ctx.pool, ctx.user, (db) => listConversations(db, ALL));
    for (const row of rows) await eraseConversation(ctx, { user: ctx.user, id: row.id, workflowId: row.workflowId });
    // runs no row names any more (a start whose row was never written, children listed late)
    const strays = await deleteExecutionsOfUser(ctx.client, ctx.config.TEMPORAL_NAMESPACE, ctx.user, ctx.log);
    return rows.length + strays;
  },
};

/** Per-call usage (model, tokens, when); on erasure folded into anonymous daily totals, with idempotency keys. */
const usage: PersonalDataKind = {
  name: 'usage',
  order: 110,
  async export({ pool, user }) {
    return asUser(pool, user, async (db) => {
      const { rows } = await db.query(
        `SELECT conversation_id AS "conversationId", step_id AS "stepId", model, input_tokens AS "inputTokens", output_tokens AS "outputTokens",
                total_tokens AS "totalTokens", created_at AS "createdAt" FROM model_usage ORDER BY created_at, step_id`,
      );
      return rows;
    });
  },
  async erase({ pool, user }) {
    const { rows } = await asUser(pool, user, async (db) => {
      // the per-user limits' counters and stream leases (030_user_limits.sql) are the person's rows too
      await db.query('DELETE FROM user_rate_windows WHERE user_id = $1', [user]);
      await db.query('DELETE FROM user_event_streams WHERE user_id = $1', [user]);
      return db.query('SELECT brigade_erase_person($1) AS report', [user]);
    });
    const report = rows[0].report as Record<string, number>;
    return report.usageRows! + report.idempotencyKeys! + report.conversations!;
  },
};

/** Sign-in: the person's API keys (never their secrets) and, on erasure, their user record, keys and sessions. */
const signIn: PersonalDataKind = {
  name: 'apiKeys',
  // last: this very request recorded the person as seen, and the record goes with everything else
  order: 200,
  async export({ pool, user }) {
    return asUser(pool, user, async (db) => {
      const { rows } = await db.query(
        `SELECT id, name, roles, expires_at AS "expiresAt", created_at AS "createdAt", last_used_at AS "lastUsedAt" FROM api_keys ORDER BY created_at`,
      );
      return rows;
    });
  },
  async erase({ pool, user }) {
    const { rows } = await asUser(pool, user, (db) => db.query('SELECT brigade_erase_sign_in($1) AS gone', [user]));
    return Number(rows[0].gone);
  },
};

/** Every kind of personal data: the runtime's, each agent's, then what other modules registered. */
export function personalDataKinds(catalog: Pick<ServerCatalog, 'servers' | 'has' | 'names'>): PersonalDataKind[] {
  return [
    mcpConnectionsKind(catalog),
    dataKeyKind,
    schedulesKind,
    conversations,
    usage,
    ...catalog.servers.flatMap((server) => server.personalData ?? []),
    ...registeredPersonalData(),
    signIn,
    tableFilesKind,
  ];
}

export const PersonalExport = z
  .object({ user: z.string(), exportedAt: z.string() })
  .catchall(z.unknown())
  .describe(
    "everything Brigade holds of the user: conversations (as GET /v1/conversations/{id}/export), usage, schedules, each agent's kinds (savedRecipes)",
  );

export const ErasureReport = z.object({ user: z.string(), erased: z.record(z.string(), z.number()) });

const UserParam = z.object({ user: z.string().min(1).max(200) });

export interface PersonalDataDeps {
  catalog: ServerCatalog;
  config: Config;
  client: Client;
  pool: pg.Pool;
  log: (line: string, error?: unknown) => void;
}

export function personalDataRoutes({ catalog, config, client, pool, log }: PersonalDataDeps): Router {
  const router = Router();
  const context = (user: string): PersonalDataContext => ({ user, config, pool, client, store: createObjectStore(config), log });

  const exportOf = async (user: string) => ({
    user,
    exportedAt: new Date().toISOString(),
    ...(await exportPerson(context(user), personalDataKinds(catalog))),
  });
  const erase = async (user: string, by: string) => {
    const erased = await erasePerson(context(user), personalDataKinds(catalog));
    // a line per erasure, for the record: who asked, whose, how much (no content)
    log(
      `Erased the data of user "${user}" (asked by "${by}"): ${Object.entries(erased)
        .map(([kind, count]) => `${kind} ${count}`)
        .join(', ')}`,
    );
    return erased;
  };
  const operatorOnly = (res: Parameters<typeof principalOf>[0]) => {
    if (!principalOf(res).roles.includes(OPERATOR_ROLE))
      throw new HttpError(403, `Only an operator (role "${OPERATOR_ROLE}") may act on another user's data`);
  };

  router.get('/me/export', async (_req, res) => {
    requireScope(principalOf(res), 'export');
    const { user } = principalOf(res);
    res.setHeader('Content-Disposition', 'attachment; filename="brigade-export.json"');
    res.setHeader('Cache-Control', 'no-store');
    res.json(await exportOf(user));
  });

  // Done before it answers: 204 means nothing of theirs is left in PostgreSQL, the object store or Temporal.
  router.delete('/me', async (_req, res) => {
    requireScope(principalOf(res), 'erase');
    const { user } = principalOf(res);
    await erase(user, user);
    res.status(204).end();
  });

  router.get('/users/:user/export', async (req, res) => {
    operatorOnly(res);
    requireScope(principalOf(res), 'operator', 'export');
    const { user } = parseBody(UserParam, req.params);
    res.setHeader('Cache-Control', 'no-store');
    res.json(await exportOf(user));
  });

  router.delete('/users/:user', async (req, res) => {
    operatorOnly(res);
    requireScope(principalOf(res), 'operator', 'erase');
    const { user } = parseBody(UserParam, req.params);
    res.json({ user, erased: await erase(user, principalOf(res).user) });
  });

  return router;
}
