// The fifth agent, proven: a fixture agent (test/fixtures/echo-agent/) added exactly as
// docs/agents/adding-an-agent.md says, listed in a catalog after the four built-in agents. The catalog is a
// value: the workflow bundle is generated from it, and the API and the worker are made from it, so nothing
// registers the agent in any process. Through the real API and worker it runs a turn with its tool and a
// turn whose tool waits for a person's approval.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { bundleWorkflows } from '../../stack/bundle-workflows.ts';
import { echoServer } from '../fixtures/echo-agent/server.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

let app: TestApp;
let dir: string;

const FIXTURE = new URL('../fixtures/echo-agent/', import.meta.url);
const DOC = new URL('../../docs/agents/adding-an-agent.md', import.meta.url);

/** A fixture file's code as an app agent's would be: its header comment off, imports from src/agents/echo/. */
async function asAppFile(name: string): Promise<string> {
  const lines = (await fs.readFile(new URL(name, FIXTURE), 'utf8')).split('\n');
  const start = lines.findIndex((line) => !line.startsWith('//'));
  return (
    lines
      .slice(start)
      // an agent outside src/agents keeps its prompts beside it; an app agent's are in prompts/<name>/
      .filter((line) => !/prompts: new URL|keeps its prompts beside it/.test(line))
      .join('\n')
      .replaceAll("'../../../src/", "'../../")
      .trim()
  );
}

/** The code block the doc gives for a file. */
function docBlock(doc: string, file: string): string {
  const at = doc.indexOf(`\`${file}\`\n\n\`\`\`ts\n`);
  assert.ok(at >= 0, `the doc gives ${file}`);
  const start = doc.indexOf('\n', doc.indexOf('```ts', at)) + 1;
  return doc.slice(start, doc.indexOf('\n```', start)).trim();
}

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-echo-'));
  const catalog = builtInCatalog(echoServer);
  const outFile = path.join(dir, 'workflow-bundle.js');
  await bundleWorkflows({ outFile, catalog, log: { warn: () => undefined, error: (message) => console.error(message) } });
  app = await startTestApp({ catalog, workflowBundlePath: outFile });
});

after(async () => {
  await app?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

test('the fixture agent is the one the doc walks through, file for file', async () => {
  const doc = await fs.readFile(DOC, 'utf8');
  assert.equal(docBlock(doc, 'src/agents/echo/spec.ts'), await asAppFile('spec.ts'));
  assert.equal(docBlock(doc, 'src/agents/echo/server.ts'), await asAppFile('server.ts'));
  assert.ok((await fs.readFile(new URL('prompts/system.txt', FIXTURE), 'utf8')).trim().length > 0, 'a system prompt');
  // the doc's list of files to touch names each of them, and the catalog line the test makes as a call
  const table = doc.slice(doc.indexOf('## Every file to touch'), doc.indexOf('## Worked example'));
  for (const file of ['src/agents/echo/spec.ts', 'src/agents/echo/server.ts', 'prompts/echo/system.txt', 'src/agents/catalog.ts'])
    assert.ok(table.includes(`\`${file}\``), file);
});

test('the API lists the fixture agent with its tools, after the four built-in agents', async () => {
  const meta = await app.call('GET', '/v1/meta');
  assert.equal(meta.status, 200);
  assert.deepEqual(
    meta.body.agents.map((agent: { name: string }) => agent.name),
    ['recipes', 'sous', 'beer', 'support', 'echo'],
  );
  const echo = meta.body.agents.find((agent: { name: string }) => agent.name === 'echo');
  assert.deepEqual(
    echo.tools.map((tool: { name: string; approval: boolean }) => [tool.name, tool.approval]),
    [
      ['echo_text', false],
      ['echo_shout', true],
    ],
  );
  assert.equal(echo.allowed, true);
});

test('a conversation with the fixture agent runs a turn with its tool through the real API and worker', async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'echo', title: 'Echo test' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.agent, 'echo');

  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text: 'echo hello there' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  const toolMessage = turn.body.messages.find((message: { role: string }) => message.role === 'tool');
  assert.equal(toolMessage.tool, 'echo_text');
  assert.deepEqual(toolMessage.result, { echoed: 'HELLO THERE', length: 11 });
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

test("the fixture agent's tool that needs a person waits for an approval, and runs the edited call once approved", async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'echo' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;

  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'shout hello there' } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  assert.equal(turn.body.pending.length, 1, JSON.stringify(turn.body));
  const [item] = turn.body.pending;
  assert.equal(item.kind, 'approval');
  assert.equal(item.tool, 'echo_shout');
  assert.deepEqual(item.args, { text: 'hello there' });
  assert.ok(!turn.body.messages.some((message: { role: string }) => message.role === 'tool'), 'nothing ran before the approval');

  const waiting = await app.call('GET', `/v1/conversations/${id}`);
  assert.equal(waiting.body.status, 'waiting');

  const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, {
    body: { pendingId: item.id, decision: 'edit', args: { text: 'hello everyone' } },
  });
  assert.equal(decided.status, 200, JSON.stringify(decided.body));
  const tool = decided.body.messages.find((message: { role: string }) => message.role === 'tool');
  assert.equal(tool.tool, 'echo_shout');
  assert.deepEqual(tool.result, { shouted: 'HELLO EVERYONE!' });
  assert.match(decided.body.messages.at(-1).text, /Shouted: HELLO EVERYONE!/);
  assert.deepEqual(decided.body.pending, []);
});

test("another agent's create-conversation fields are refused for the fixture agent, as for any agent", async () => {
  const refused = await app.call('POST', '/v1/conversations', {
    body: { agent: 'echo', recipeId: '00000000-0000-4000-8000-000000000000' },
  });
  assert.equal(refused.status, 400);
  assert.deepEqual(refused.body.fields, [{ field: 'recipeId', message: 'only for the sous agent' }]);
});

test('an agent the catalog does not list is refused before anything is written', async () => {
  const refused = await app.call('POST', '/v1/conversations', { body: { agent: 'nobody' } });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.fields[0].field, 'agent');
});

test('a catalog refuses an agent whose tool or name another agent already has', () => {
  assert.throws(() => builtInCatalog(echoServer, echoServer), /Agent "echo" is listed twice/);
  const thief = { ...echoServer, name: 'thief', spec: { ...echoServer.spec, name: 'thief' } };
  assert.throws(() => builtInCatalog(echoServer, thief), /Tool "echo_text" of agent "thief" is agent "echo"'s/);
});
