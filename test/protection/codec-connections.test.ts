// The codec's connections are its own: a conversation starts inside its row's transaction, and sealing the start
// looks up the person's data key in PostgreSQL. On the app's pool, ten creations at once held every connection
// while each start waited for one, and every creation answered 503 after the start's 5 s deadline (drill 5's burst).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sealedWith } from '../../src/protection/payload-codec.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp({
    env: {
      PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }),
      // one user stands for many people starting conversations at once: the per-user limits are not measured here
      USER_CONCURRENT_REQUESTS: '0',
      USER_NEW_CONVERSATIONS_PER_MINUTE: '0',
    },
  });
});
after(async () => app?.stop());

test('thirty conversations started at once (three times the pool) each answer 201, sealed under their person’s key', async () => {
  const started = Date.now();
  const created = await Promise.all(
    Array.from({ length: 30 }, (_, i) => app.call('POST', '/v1/conversations', { body: { agent: 'support', title: `burst ${i}` } })),
  );
  const took = Date.now() - started;
  assert.deepEqual(
    created.map((answer) => answer.status),
    created.map(() => 201),
    JSON.stringify(created.find((answer) => answer.status !== 201)?.body),
  );
  assert.ok(took < 5_000, `the burst took ${took} ms`);
  const { workflowId } = created[0]!.body as { workflowId: string };
  const history = await app.client.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId } });
  const input = history.history!.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  assert.match(sealedWith(input) ?? '', /^person:/, "the start is sealed under the person's data key");
});
