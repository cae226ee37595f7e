import type { Client } from '@temporalio/client';
import express from 'express';
import type pg from 'pg';
import type { Config, TokenGrant } from '../config.ts';
import { bearerAuth } from './auth.ts';
import { conversationRoutes } from './conversations.ts';
import { EventNotifier } from './event-notifier.ts';
import { fileRoutes } from './files.ts';
import { healthRoutes } from './health.ts';
import { metaRoutes } from './meta.ts';
import { HttpError, errorHandler } from './http-error.ts';
import { openApiDocument } from './openapi.ts';
import { webAppRoutes } from './web-app.ts';

export interface AppDeps {
  config: Config;
  client: Client;
  pool: pg.Pool;
  tokens: Record<string, TokenGrant>;
  checkTemporal: () => Promise<void>;
  log?: (line: string, error?: unknown) => void;
  /** the Temporal Web UI's address, for links from the web client (GET /v1/meta) */
  temporalUiUrl?: string;
}

export function createApp({ config, client, pool, tokens, checkTemporal, log, temporalUiUrl }: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '256kb' }));
  app.use(healthRoutes({ pool, checkTemporal }));
  const document = openApiDocument();
  app.get('/openapi.json', (_req, res) => void res.json(document));
  app.use(fileRoutes(config));
  app.use('/v1', bearerAuth(tokens), metaRoutes({ config, temporalUiUrl }), conversationRoutes({ config, client, pool, notifier: new EventNotifier(pool) }));
  app.use(webAppRoutes());
  app.use((_req, _res, next) => next(new HttpError(404, 'No such route')));
  app.use(errorHandler(log ?? ((line, error) => console.error(line, error instanceof Error ? error.message : error))));
  return app;
}
