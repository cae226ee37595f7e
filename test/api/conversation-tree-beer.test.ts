// A confirmation belongs to its branch (issue 45, item 3): an edit while beer's recommendation waits for the person
// stops that turn on its branch, withdraws the confirmation and ends the recommendation's child workflow; the new
// branch's turn runs on its own. Offline model, a local OpenBreweryDB.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SAN_DIEGO_CLIENT, progressEvents } from '../support/beer.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { ERIN_BEER_STAFF, type TestApp, startTestApp } from '../support/test-app.ts';

let api: FakeOpenBreweryDb;
let app: TestApp;
before(async () => {
  api = await startFakeOpenBreweryDb();
  app = await startTestApp({ env: { OPENBREWERYDB_BASE_URL: api.baseUrl, BEER_CONFIRMATION_TIMEOUT: '60s' } });
});
after(async () => {
  await app?.stop();
  await api?.close();
});

const call: TestApp['call'] = (method, path, options = {}) => app.call(method, path, { token: ERIN_BEER_STAFF, ...options });

test("leaving a branch while beer's confirmation waits withdraws it and ends the recommendation run", async () => {
  const created = await call('POST', '/v1/conversations', { body: { agent: 'beer', client: SAN_DIEGO_CLIENT, title: 'tree' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const asked = await call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'recommend breweries' } });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  const confirmation = asked.body.pending[0];
  assert.equal(confirmation?.kind, 'confirmation', JSON.stringify(asked.body));
  const run = (await progressEvents(app.adminUrl, id)).find((event) => event.workflowId)!.workflowId as string;
  assert.equal((await app.client.workflow.getHandle(run).describe()).status.name, 'RUNNING');

  const started = performance.now();
  const edited = await call('POST', `/v1/conversations/${id}/messages/${asked.body.messages[0].id}/edit`, { body: { text: 'hello' } });
  assert.ok(performance.now() - started < 5_000, `the edit took ${Math.round(performance.now() - started)} ms`);
  assert.equal(edited.status, 200, JSON.stringify(edited.body));
  assert.deepEqual(edited.body.pending, []);

  const closed = await app.adminQuery(
    "SELECT data FROM events WHERE conversation_id = $1 AND type = 'pending.closed' AND data->>'id' = $2",
    [id, confirmation.id],
  );
  assert.equal(closed[0]?.data.closedAs, 'withdrawn');
  const late = await call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: confirmation.id, decision: 'yes', choice: confirmation.options[0].id },
  });
  assert.equal(late.status, 409, JSON.stringify(late.body));
  const deadline = Date.now() + 10_000;
  let status = '';
  while (Date.now() < deadline) {
    status = (await app.client.workflow.getHandle(run).describe()).status.name;
    if (status !== 'RUNNING') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.notEqual(status, 'RUNNING', 'the recommendation run ended with its branch');
  const history = await app.client.workflow.getHandle(`conversation-${id}`).fetchHistory();
  assert.ok(!history.events?.some((event) => event.workflowTaskFailedEventAttributes), 'no workflow task failed (no revival)');
  const view = await call('GET', `/v1/conversations/${id}`);
  assert.equal(view.body.messages[0].text, 'hello');
  assert.equal(view.body.messages[0].siblings.count, 2);
});

test("Stop while beer's confirmation waits answers at once: the item is withdrawn and the workflow task never fails", async () => {
  const created = await call('POST', '/v1/conversations', { body: { agent: 'beer', client: SAN_DIEGO_CLIENT, title: 'stop' } });
  const id = created.body.id as string;
  const asked = await call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'recommend breweries' } });
  const confirmation = asked.body.pending[0];
  assert.equal(confirmation?.kind, 'confirmation', JSON.stringify(asked.body));
  // the turn stops waiting for the child at once and ends; the child's item hears of the Stop after it
  const started = performance.now();
  const stopped = await call('POST', `/v1/conversations/${id}/stop`);
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  assert.deepEqual(stopped.body, { stopped: true });
  assert.ok(performance.now() - started < 5_000, `Stop took ${Math.round(performance.now() - started)} ms`);
  const closed = await app.adminQuery(
    "SELECT data FROM events WHERE conversation_id = $1 AND type = 'pending.closed' AND data->>'id' = $2",
    [id, confirmation.id],
  );
  assert.equal(closed[0]?.data.closedAs, 'withdrawn');
  const history = await app.client.workflow.getHandle(`conversation-${id}`).fetchHistory();
  assert.ok(!history.events?.some((event) => event.workflowTaskFailedEventAttributes), 'no workflow task failed');
  assert.equal((await call('GET', `/v1/conversations/${id}`)).body.status, 'idle');
});
