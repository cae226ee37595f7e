// One authorization rule for every conversation route (issue 29, finding 2): the owner, and the role the
// conversation's agent requires. A user's role is removed between two starts of the API (API_TOKENS changed);
// every route of the OpenAPI document that names a conversation is then walked with that user's token, and
// each must answer 403 and change nothing (export, stop and delete used to skip the role check).
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, test } from 'node:test';
import { Connection } from '@temporalio/client';
import { openApiDocument } from '../../src/api/openapi.ts';
import type { TokenGrant } from '../../src/config.ts';
import { temporalAddress } from '../support/harness.ts';
import { ALICE, ERIN_BEER_STAFF, TOKENS, type TestApp, serveApi, startTestApp } from '../support/test-app.ts';

let app: TestApp;
let second: { server: Server; baseUrl: string; connection: Connection } | undefined;

/** The same tokens, as the second start's API_TOKENS: alice lost `support`, erin lost `beer-staff`. */
const CHANGED: Record<string, TokenGrant> = {
  ...TOKENS,
  [ALICE]: { ...TOKENS[ALICE]!, roles: [] },
  [ERIN_BEER_STAFF]: { ...TOKENS[ERIN_BEER_STAFF]!, roles: [] },
};

before(async () => {
  app = await startTestApp();
});
after(async () => {
  if (second) {
    second.server.closeAllConnections();
    await new Promise((resolve) => second!.server.close(resolve));
    await second.connection.close();
  }
  await app?.stop();
});

/** Every operation on a path under /v1/conversations/{id}, from the document the API serves. */
function conversationOperations(): { method: string; path: string; operation: any }[] {
  const paths = openApiDocument().paths as Record<string, Record<string, any>>;
  return Object.entries(paths)
    .filter(([path]) => path.startsWith('/v1/conversations/{id}'))
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
    );
}

async function call(baseUrl: string, token: string, method: string, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    body: method === 'POST' ? JSON.stringify({ text: 'hello', pendingId: 'x', decision: 'approve', hardAvoid: 'nuts' }) : undefined,
    // an event stream that was (wrongly) opened would never end on its own
    signal: AbortSignal.timeout(20_000),
  });
  const text = response.headers.get('content-type')?.includes('text/event-stream') ? '(an event stream)' : await response.text();
  if (response.body && !response.bodyUsed) await response.body.cancel();
  return { status: response.status, text };
}

test('a user whose role was removed between two starts is refused on every conversation route, and nothing changes', async () => {
  const created = await app.call('POST', '/v1/conversations', { token: ALICE, body: { agent: 'support', title: 'customer data' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const support = created.body.id as string;
  const turn = await app.call('POST', `/v1/conversations/${support}/messages`, { token: ALICE, body: { text: 'Look up customer 1001' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  const beerCreated = await app.call('POST', '/v1/conversations', {
    token: ERIN_BEER_STAFF,
    body: { agent: 'beer', client: 'CLT-CFY747' },
  });
  assert.equal(beerCreated.status, 201, JSON.stringify(beerCreated.body));
  const beer = beerCreated.body.id as string;
  const before = (await app.call('GET', `/v1/conversations/${support}/export`, { token: ALICE })).body;

  // The second start: the same database and Temporal, API_TOKENS without the roles.
  const connection = await Connection.connect({ address: temporalAddress() });
  second = { ...(await serveApi({ config: app.config, client: app.client, pool: app.pool, connection, tokens: CHANGED })), connection };

  const operations = conversationOperations();
  const walked = operations.map(({ method, path }) => `${method} ${path}`);
  // the walk covers the routes the finding names, and each agent's own routes
  for (const route of [
    'GET /v1/conversations/{id}',
    'DELETE /v1/conversations/{id}',
    'POST /v1/conversations/{id}/messages',
    'POST /v1/conversations/{id}/decisions',
    'GET /v1/conversations/{id}/events',
    'POST /v1/conversations/{id}/stop',
    'GET /v1/conversations/{id}/export',
    'GET /v1/conversations/{id}/metrics',
    'GET /v1/conversations/{id}/bar',
    'POST /v1/conversations/{id}/recipe/save',
  ]) {
    assert.ok(walked.includes(route), `the OpenAPI document lists ${route}`);
  }

  const wrong: string[] = [];
  for (const [token, id] of [
    [ALICE, support],
    [ERIN_BEER_STAFF, beer],
  ] as const) {
    for (const { method, path, operation } of operations) {
      if (!operation.responses?.['403']) wrong.push(`${method} ${path}: the document does not say it may answer 403`);
      const url = path.replace('{id}', id).replace(/\{[^}]+\}/g, 'step-1');
      const answer = await call(second.baseUrl, token, method, url);
      if (answer.status !== 403)
        wrong.push(
          `${method} ${path} (${token === ALICE ? 'alice without support' : 'erin without beer-staff'}): ${answer.status} ${answer.text.slice(0, 200)}`,
        );
    }
  }
  assert.deepEqual(wrong, []);

  // Nothing was deleted, stopped or sent: with the role (the first start's tokens) the conversation is as it was.
  const view = await app.call('GET', `/v1/conversations/${support}`, { token: ALICE });
  assert.equal(view.status, 200);
  const afterwards = (await app.call('GET', `/v1/conversations/${support}/export`, { token: ALICE })).body;
  assert.deepEqual(afterwards.messages, before.messages);
  assert.equal((await app.call('GET', `/v1/conversations/${beer}`, { token: ERIN_BEER_STAFF })).status, 200);
});
