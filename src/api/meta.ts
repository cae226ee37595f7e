// `GET /v1/meta`: what a client needs to know about this deployment and the caller, so the web client
// asks the API instead of guessing: which agents the token may open, their tools' argument schemas (the
// approval edit form is made from them), the model (for a cost estimate) and the Temporal Web UI.
import { Router } from 'express';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import { mayNeedApproval } from '../shared/tool-spec.ts';
import { principalOf } from './auth.ts';
import { chatModelName } from '../model/select.ts';

const JsonSchemaObject = z.record(z.string(), z.unknown());

/** The body over the catalog's agents (their names are its enum). */
export const metaBody = (catalog: Pick<AgentCatalog, 'names'>) =>
  z.object({
    user: z.string(),
    /** a name to show: the provider's preferred_username, name or e-mail, else the user id */
    name: z.string(),
    roles: z.array(z.string()),
    client: z.string().nullable(),
    /** the chat model's name (`offline` without a model key), for a cost estimate */
    model: z.string(),
    temporal: z.object({
      namespace: z.string(),
      uiUrl: z.string().nullable(),
      /** the Web UI page of a conversation's workflow: replace {workflowId} */
      workflowUrlTemplate: z.string().nullable(),
    }),
    agents: z.array(
      z.object({
        name: z.enum(catalog.names() as [string, ...string[]]),
        /** the role a token needs to open a conversation with it (null: none) */
        requiredRole: z.string().nullable(),
        allowed: z.boolean(),
        /** a conversation with it needs `client` in POST /v1/conversations (beer, for a token without a client) */
        asksForClient: z.boolean(),
        stateful: z.boolean(),
        tools: z.array(
          z.object({
            name: z.string(),
            description: z.string(),
            approval: z.boolean(),
            parameters: JsonSchemaObject,
            /** its results' `sources` may be shown as links (https: only); every other tool's are text */
            sources: z.boolean(),
          }),
        ),
      }),
    ),
  });
export type MetaBody = z.infer<ReturnType<typeof metaBody>>;

export function metaRoutes({ catalog, config, temporalUiUrl }: { catalog: AgentCatalog; config: Config; temporalUiUrl?: string }): Router {
  const router = Router();
  const model = chatModelName(config);
  const uiUrl = (temporalUiUrl ?? config.TEMPORAL_UI_URL)?.replace(/\/+$/, '');
  router.get('/meta', (_req, res) => {
    const principal = principalOf(res);
    const body: MetaBody = {
      user: principal.user,
      name: principal.name ?? principal.user,
      roles: principal.roles,
      client: principal.client ?? null,
      model,
      temporal: {
        namespace: config.TEMPORAL_NAMESPACE,
        uiUrl: uiUrl ?? null,
        workflowUrlTemplate: uiUrl ? `${uiUrl}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}/workflows/{workflowId}` : null,
      },
      agents: catalog.specs.map((spec) => {
        const name = spec.name;
        // a conversation for a client (a bar): a token without a client needs the role and names one
        const clientRole = spec.clientRole;
        const requiredRole = spec.requiredRole ?? (clientRole && !principal.client ? clientRole : undefined);
        return {
          name,
          requiredRole: requiredRole ?? null,
          allowed: !requiredRole || principal.roles.includes(requiredRole),
          asksForClient: Boolean(clientRole) && !principal.client,
          /** keeps state of its own (sous: the recipe beside the chat) */
          stateful: Boolean(spec.kernel),
          tools: spec.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            approval: mayNeedApproval(tool.policy),
            parameters: z.toJSONSchema(tool.args, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>,
            sources: tool.sources === true,
          })),
        };
      }),
    };
    res.json(body);
  });
  return router;
}
