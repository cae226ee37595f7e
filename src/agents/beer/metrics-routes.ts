// GET /v1/conversations/:id/metrics: the execution log and metrics of a conversation's brewery
// recommendations. Their workflow IDs come from the conversation's own progress events (written by each
// recommendation as it starts, readable only by the conversation's owner); each workflow answers the
// beerMetrics Query, running or finished.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { Router } from 'express';
import type { OpenApiHelpers } from '../../api/agent-server.ts';
import type pg from 'pg';
import { asUser } from '../../db/pool.ts';
import { type RecommendationMetrics, aggregateMetrics, beerMetricsQuery } from './definitions.ts';
import type { ConversationAccess } from '../../api/conversation-access.ts';

const QUERY_DEADLINE_MS = 5_000;

export function beerMetricsRoutes({ client, pool, access }: { client: Client; pool: pg.Pool; access: ConversationAccess }): Router {
  const router = Router();
  router.get('/conversations/:id/metrics', async (req, res) => {
    const { principal, row } = await access.authorizedConversation(res, String(req.params.id));
    const ids = await asUser(pool, principal.user, async (db) => {
      const { rows } = await db.query<{ workflow_id: string }>(
        `SELECT data->>'workflowId' AS workflow_id FROM events
          WHERE conversation_id = $1 AND type = 'progress' AND data ? 'workflowId'
          GROUP BY 1 ORDER BY min(id)`,
        [row.id],
      );
      return rows.map((r) => r.workflow_id);
    });
    const answers = await Promise.all(
      ids.map((id) =>
        client
          .withDeadline(Date.now() + QUERY_DEADLINE_MS, () => client.workflow.getHandle(id).query(beerMetricsQuery))
          // A run whose history the server no longer keeps (past retention) is listed, not an error.
          .catch((error: unknown) => {
            if (error instanceof WorkflowNotFoundError) return id;
            throw error;
          }),
      ),
    );
    const workflows = answers.filter((answer): answer is RecommendationMetrics => typeof answer !== 'string');
    const unavailable = answers.filter((answer): answer is string => typeof answer === 'string');
    res.json({ conversationId: row.id, workflows, unavailable, totals: aggregateMetrics(workflows) });
  });
  return router;
}

/** The metrics route in the OpenAPI document. */
export function beerMetricsPaths({ json, errors, idParam }: OpenApiHelpers): Record<string, unknown> {
  return {
    '/v1/conversations/{id}/metrics': {
      get: {
        operationId: 'getConversationMetrics',
        summary:
          "The beer agent's recommendation runs in this conversation: each one's execution log (step, tool, time, status, cache state) and metrics (per tool, totals, cache hit rate, grounding calls made and saved), and the conversation's totals",
        parameters: [idParam],
        responses: { 200: json('Metrics', 'ConversationMetrics'), ...errors(401, 403, 404, 503) },
      },
    },
  };
}
