// What an approval would touch, shown with it (PendingItem.preview): the tool's own read-only lookup, run by the
// model step for each call of its reply that will ask a person, before the workflow opens the item. A preview
// only informs: a lookup that fails or finds nothing leaves the item as it was, and never fails the step.
import type pg from 'pg';
import { log } from '@temporalio/activity';
import type { JsonObject, ToolCall } from '../shared/messages.ts';
import { storableJson } from '../shared/safe-text.ts';
import { needsApproval } from '../shared/tool-spec.ts';
import { asUser } from '../db/pool.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import type { ActivityCatalog } from './services.ts';

/** A preview is a few facts, not a result: larger than this, it is left out (a card shows it whole or not at all). */
export const APPROVAL_PREVIEW_MAX_BYTES = 4096;

export interface PreviewRef {
  conversationId: string;
  userId: string;
  agent: string;
}

/** The previews of a reply's calls that will ask a person, by call id; undefined when none has one. */
export type PreviewCalls = (ref: PreviewRef, calls: readonly ToolCall[]) => Promise<Record<string, JsonObject> | undefined>;

export function createPreviewCalls({ catalog, pool }: { catalog: ActivityCatalog & AgentCatalog; pool: pg.Pool }): PreviewCalls {
  const previews = Object.assign({}, ...catalog.servers.map((server) => server.previews ?? {})) as NonNullable<
    ActivityCatalog['servers'][number]['previews']
  >;
  return async function previewCalls(ref, calls) {
    const tools = catalog.agent(ref.agent).tools;
    const found: Record<string, JsonObject> = {};
    for (const call of calls) {
      const spec = tools.find((tool) => tool.name === call.name);
      const preview = previews[call.name];
      if (!spec || !preview) continue;
      const args = spec.args.safeParse(call.args);
      if (!args.success) continue; // the workflow answers it with the error; nothing opens
      if (!needsApproval(spec.policy, args.data as JsonObject)) continue;
      try {
        const value = await asUser(pool, ref.userId, async (db) => {
          await db.query('SET TRANSACTION READ ONLY');
          return preview(args.data, { db, userId: ref.userId, conversationId: ref.conversationId });
        });
        if (!value) continue;
        const stored = storableJson(value) as JsonObject;
        if (Buffer.byteLength(JSON.stringify(stored)) <= APPROVAL_PREVIEW_MAX_BYTES) found[call.id] = stored;
      } catch (error) {
        // the tool's name and the failure's kind only: a lookup's values are a customer's details
        log.warn('An approval preview failed; the approval opens without it', {
          tool: call.name,
          error: error instanceof Error ? error.name : typeof error,
        });
      }
    }
    return Object.keys(found).length ? found : undefined;
  };
}
