// The beer agent in the server processes: its tools, the recommendation's activities, who may open a
// conversation for which client, the confirmation timeout, GET /v1/conversations/:id/metrics and the bars
// (GET /v1/bars, GET /v1/conversations/:id/bar).
import { defineAgentServer } from '../../api/agent-server.ts';
import { beerAgent } from './spec.ts';
import { type BeerConfig, beerSettings } from './settings.ts';
import { beerProfileSource, createBeerActivities } from './activities.ts';
import { requireBeerClient } from './client-access.ts';
import { setBeerMinClients } from './clients-db.ts';
import { ConversationMetricsView } from './definitions.ts';
import { beerImplementations } from './implementations.ts';
import { beerMetricsPaths, beerMetricsRoutes } from './metrics-routes.ts';
import { BeerBarList, BeerClientView, beerClientPaths, beerClientRoutes } from './client-routes.ts';
import { beerOfflineChat } from './offline-chat.ts';
import { beerReadings } from './offline-readings.ts';
import { webSummaryOffline } from './offline-finder.ts';
import { offlineSqlGeneration } from './offline-sql.ts';

export const beerServer = defineAgentServer({
  name: 'beer',
  spec: beerAgent,
  bundle: {
    spec: new URL('./spec.ts', import.meta.url),
    specExport: 'beerAgent',
    workflows: new URL('./workflows.ts', import.meta.url),
  },
  config: beerSettings,
  migrations: new URL('./migrations/', import.meta.url),
  implementations: beerImplementations,
  activities: (services) => createBeerActivities(services, beerProfileSource),
  routes: ({ client, pool, access }) => beerMetricsRoutes({ client, pool, access }).use(beerClientRoutes({ pool, access })),
  create: {
    authorize: ({ pool, principal, body }) => requireBeerClient(pool, principal, body.client),
  },
  offline: {
    ...beerOfflineChat,
    tasks: { web_summary: (request) => webSummaryOffline(request), sql_generation: offlineSqlGeneration },
    describe: beerReadings,
  },
  // k of the aggregate views lives in the database, where the views read it
  onWorkerStart: ({ config, pool }) => setBeerMinClients(pool, (config as BeerConfig).BEER_MIN_CLIENTS),
  settings: (config) => ({ beerConfirmationTimeoutMs: (config as BeerConfig).BEER_CONFIRMATION_TIMEOUT }),
  openapi: {
    schemas: { ConversationMetrics: ConversationMetricsView, BeerClient: BeerClientView, BeerBarList },
    paths: (helpers) => ({ ...beerMetricsPaths(helpers), ...beerClientPaths(helpers) }),
  },
});
