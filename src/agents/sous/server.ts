// The sous agent in the server processes: where a conversation starts from (a recipe, a saved one or the
// demo, and the cook's defaults), what its view adds, and its routes.
import { defineAgentServer } from '../../api/agent-server.ts';
import { sousAgent } from './spec.ts';
import { OverrideBody, SaveVersionBody, SavedVersion, SousCreateFields, SousStateView, SousViewFields } from './api-schemas.ts';
import { offlineSous } from './offline.ts';
import { sousInit, sousPaths, sousRoutes } from './routes.ts';

export const sousServer = defineAgentServer({
  name: 'sous',
  spec: sousAgent,
  bundle: { spec: new URL('./spec.ts', import.meta.url), specExport: 'sousAgent' },
  routes: ({ client, pool, access }) => sousRoutes({ client, pool, access }),
  create: {
    fields: SousCreateFields.shape,
    check: SousCreateFields.check,
    // the body was checked against the sous fields above
    init: ({ pool, principal, body }) => sousInit(pool, principal.user, body as Parameters<typeof sousInit>[2]),
  },
  view: SousViewFields,
  offline: { structured: offlineSous },
  openapi: {
    schemas: { SousState: SousStateView, SavedVersion },
    inputs: { HardAvoidOverride: OverrideBody, SaveVersionBody },
    paths: sousPaths,
  },
});
