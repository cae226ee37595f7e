// MCP tools beside an agent's own, under the same approvals, deadlines and durability: a real MCP server
// (test/support/mcp-kitchen.ts) over stdio (a child of the worker) and over Streamable HTTP (in this process),
// the real @google/genai client against the scripted Gemini server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from './support/fake-gemini.ts';
import { type KitchenHttp, startKitchenHttp } from './support/mcp-kitchen.ts';
import { type TestApp, startTestApp } from './support/test-app.ts';

const STDIO_SERVER = new URL('./support/mcp-stdio-server.ts', import.meta.url).pathname;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-'));
const stdioLog = path.join(dir, 'pantry-calls.jsonl');
const configPath = path.join(dir, 'mcp.json');

let fake: FakeGemini;
let kitchen: KitchenHttp;
let app: TestApp;

export function writeMcpConfig(file: string, kitchenUrl: string, log: string): void {
  fs.writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        pantry: { command: process.execPath, args: [STDIO_SERVER], env: { KITCHEN_CALL_LOG: log }, agents: ['support'] },
        kitchen: {
          url: kitchenUrl,
          headers: { Authorization: 'Bearer ${KITCHEN_TOKEN}' },
          agents: ['support'],
          questionDeadline: '3s',
          tools: { order_groceries: { deadline: '5m' }, broken_oven: { approval: 'never' } },
        },
        fridge: { url: kitchenUrl, agents: ['support'], approval: 'always', tools: { order_groceries: { deadline: '1500ms', timeoutAction: 'reject' } } },
      },
    }),
  );
}

before(async () => {
  process.env.KITCHEN_TOKEN = 'kitchen-secret-token';
  fake = await startFakeGemini();
  kitchen = await startKitchenHttp();
  writeMcpConfig(configPath, kitchen.url, stdioLog);
  app = await startTestApp({ env: { GEMINI_API_KEY: 'mcp-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '10s', BRIGADE_MCP_CONFIG: configPath } });
});
after(async () => {
  await app?.stop();
  await kitchen?.close();
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const open = async () => {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'mcp' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
};
const say = async (id: string, text: string) => {
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return turn.body;
};
const decide = (id: string, body: Record<string, unknown>) => app.call('POST', `/v1/conversations/${id}/decisions`, { body });
const toolMessages = (turn: { messages: { role: string }[] }) => turn.messages.filter((message) => message.role === 'tool') as any[];
/** what the model was sent as the result of its last function call */
const lastFunctionResponse = () => {
  const parts = fake.requests.at(-1)!.body.contents!.flatMap((content) => content.parts ?? []);
  return parts.filter((part) => part.functionResponse).at(-1)?.functionResponse;
};
const stdioCalls = () => (fs.existsSync(stdioLog) ? fs.readFileSync(stdioLog, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)) : []);

describe('MCP tools', () => {
  test('are offered beside the agent\'s own; a read-only tool over stdio runs without asking', async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'pantry__lookup_pantry', args: { ingredient: 'flour' } }), reply.text('You have 500 g of flour.'));
    const turn = await say(id, 'How much flour is there?');
    assert.deepEqual(turn.pending, []);
    const [tool] = toolMessages(turn);
    assert.equal(tool.tool, 'pantry__lookup_pantry');
    assert.equal(tool.result.text, 'There are 500 g of flour.');
    assert.deepEqual(tool.result.structured, { ingredient: 'flour', grams: 500 });
    assert.equal(turn.messages.at(-1).text, 'You have 500 g of flour.');

    const declarations = fake.requests.at(-2)!.body.tools!.flatMap((tools) => tools.functionDeclarations ?? []);
    const names = declarations.map((declaration) => declaration.name);
    for (const name of ['get_order_by_id', 'pantry__lookup_pantry', 'pantry__order_groceries', 'kitchen__broken_oven', 'fridge__lookup_pantry']) {
      assert.ok(names.includes(name), `${name} is declared: ${names.join(', ')}`);
    }
    const lookup = declarations.find((declaration) => declaration.name === 'pantry__lookup_pantry')!;
    assert.equal(lookup.parametersJsonSchema.type, 'object');
    assert.equal(lookup.parametersJsonSchema.properties.ingredient.type, 'string');
    assert.equal(lookup.parametersJsonSchema.$schema, undefined);
    assert.deepEqual(lastFunctionResponse()?.response?.structured ?? lastFunctionResponse()?.response?.output?.structured, { ingredient: 'flour', grams: 500 });
    assert.equal(stdioCalls().filter((call) => call.tool === 'lookup_pantry').length, 1);
  });
});
