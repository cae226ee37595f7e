// The Web UI's Stack Trace tab (the __stack_trace query) on a conversation waiting for a person: it says where
// the wait began, in Brigade's sources, at the depth the sandbox keeps (src/workflows/stack-depth.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WORKFLOW_STACK_FRAMES } from '../../src/workflows/stack-depth.ts';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { type TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp({ key: 'stack-key', env: { MODEL_TIMEOUT: '10s' } }, (parts) => void ({ fake, app } = parts));

test('a parked conversation shows where it waits, in its own sources, within the kept depth', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'stack' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  fake.script(reply.calls({ name: 'cancel_order', args: { order_id: '12345' } }));
  const parked = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'Cancel order 12345' } });
  assert.equal(parked.status, 200, JSON.stringify(parked.body));
  assert.equal(parked.body.pending[0].kind, 'approval');

  const trace = await app.client.workflow.getHandle(created.body.workflowId).query<string>('__stack_trace');
  const stacks = trace.split('\n\n').filter(Boolean);
  assert.ok(stacks.length > 0, trace);
  assert.match(trace, /src\/workflows\/[\w-]+\.ts:\d+:\d+/, 'frames are mapped to the workflow sources');
  for (const stack of stacks) assert.ok(stack.split('\n').length <= WORKFLOW_STACK_FRAMES, stack);
});
