// A fifth agent defined in the test suite (test/support/echo-agent/) plugs in as the four in src/agents
// do: registered in this process (API and worker) and in the workflow bundle's entry, it is opened through
// the real API and runs a turn with its tool on the real worker.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { bundleWorkflows } from '../../stack/bundle-workflows.ts';
import '../support/echo-agent/register-server.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
let dir: string;

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-echo-'));
  const outFile = path.join(dir, 'workflow-bundle.js');
  const workflowsPath = fileURLToPath(new URL('../support/echo-agent/workflows.ts', import.meta.url));
  await bundleWorkflows({ outFile, workflowsPath, log: { warn: () => undefined, error: (message) => console.error(message) } });
  app = await startTestApp({ workflowBundlePath: outFile });
});

after(async () => {
  await app?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

test('the API lists the test agent with its tool, after the four built-in agents', async () => {
  const meta = await app.call('GET', '/v1/meta');
  assert.equal(meta.status, 200);
  assert.deepEqual(
    meta.body.agents.map((agent: { name: string }) => agent.name),
    ['recipes', 'sous', 'beer', 'support', 'echo'],
  );
  const echo = meta.body.agents.find((agent: { name: string }) => agent.name === 'echo');
  assert.deepEqual(
    echo.tools.map((tool: { name: string }) => tool.name),
    ['echo_text'],
  );
  assert.equal(echo.allowed, true);
});

test('a conversation with the test agent runs a turn with its tool through the real API and worker', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'echo', title: 'Echo test' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.agent, 'echo');

  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'echo hello there' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  const toolMessage = turn.body.messages.find((message: { role: string }) => message.role === 'tool');
  assert.equal(toolMessage.tool, 'echo_text');
  assert.deepEqual(toolMessage.result, { echoed: 'HELLO THERE', length: 11, conversation: created.body.id });
  const reply = turn.body.messages.at(-1);
  assert.equal(reply.role, 'assistant');
  assert.match(reply.text, /Echo: HELLO THERE \(11 characters\)/);
  assert.deepEqual(turn.body.pending, []);

  const view = await app.call('GET', `/v1/conversations/${created.body.id}`);
  assert.equal(view.status, 200);
  assert.equal(view.body.agent, 'echo');
  assert.equal(view.body.status, 'idle');
  assert.ok(view.body.messages.some((message: { tool?: string }) => message.tool === 'echo_text'));
});

test("another agent's create-conversation fields are refused for the test agent, as for any agent", async () => {
  const refused = await app.call('POST', '/v1/conversations', {
    body: { agent: 'echo', recipeId: '00000000-0000-4000-8000-000000000000' },
  });
  assert.equal(refused.status, 400);
  assert.deepEqual(refused.body.fields, [{ field: 'recipeId', message: 'only for the sous agent' }]);
});

test('an agent no registry lists is refused before anything is written', async () => {
  const refused = await app.call('POST', '/v1/conversations', { body: { agent: 'nobody' } });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.fields[0].field, 'agent');
});
