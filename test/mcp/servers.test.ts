// MCP tools beside an agent's own, under the same approvals, deadlines and durability: a real MCP server
// (test/support/mcp-kitchen.ts) over stdio (a child of the worker) and over Streamable HTTP (in this process),
// the real @google/genai client against the scripted Gemini server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeGemini, reply, startFakeGemini } from '../support/fake-gemini.ts';
import { type KitchenHttp, MENU_SCHEMA, ONE_PIXEL_PNG, startKitchenHttp } from '../support/mcp-kitchen.ts';
import { decisionSignal } from '../../src/shared/definitions.ts';
import { waitUntilIdle } from '../support/scenarios.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';

const STDIO_SERVER = new URL('../support/mcp-stdio-server.ts', import.meta.url).pathname;
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
        fridge: {
          url: kitchenUrl,
          agents: ['support'],
          approval: 'always',
          tools: { order_groceries: { deadline: '1500ms', timeoutAction: 'reject' } },
        },
      },
    }),
  );
}

before(async () => {
  process.env.KITCHEN_TOKEN = 'kitchen-secret-token';
  fake = await startFakeGemini();
  kitchen = await startKitchenHttp();
  writeMcpConfig(configPath, kitchen.url, stdioLog);
  app = await startTestApp({
    env: {
      GEMINI_API_KEY: 'mcp-key',
      GEMINI_BASE_URL: fake.baseUrl,
      MODEL_TIMEOUT: '10s',
      BRIGADE_MCP_CONFIG: configPath,
      DATA_DIR: path.join(dir, 'data'),
    },
  });
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
const stdioCalls = () =>
  fs.existsSync(stdioLog)
    ? fs
        .readFileSync(stdioLog, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];

describe('MCP tools', () => {
  test("are offered beside the agent's own; a read-only tool over stdio runs without asking", async () => {
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
    for (const name of [
      'get_order_by_id',
      'pantry__lookup_pantry',
      'pantry__order_groceries',
      'kitchen__broken_oven',
      'fridge__lookup_pantry',
    ]) {
      assert.ok(names.includes(name), `${name} is declared: ${names.join(', ')}`);
    }
    const lookup = declarations.find((declaration) => declaration.name === 'pantry__lookup_pantry')!;
    assert.equal(lookup.parametersJsonSchema.type, 'object');
    assert.equal(lookup.parametersJsonSchema.properties.ingredient.type, 'string');
    assert.equal(lookup.parametersJsonSchema.$schema, undefined);
    assert.deepEqual(lastFunctionResponse()?.response?.structured ?? lastFunctionResponse()?.response?.output?.structured, {
      ingredient: 'flour',
      grams: 500,
    });
    assert.equal(stdioCalls().filter((call) => call.tool === 'lookup_pantry').length, 1);
  });

  test('a gated tool over HTTP parks until approved, and the server sees the approved call once', async () => {
    const id = await open();
    const before = kitchen.calls.length;
    fake.script(reply.calls({ name: 'kitchen__order_groceries', args: { item: 'eggs', quantity: 12 } }));
    const parked = await say(id, 'Order a dozen eggs');
    assert.equal(parked.pending.length, 1);
    const [item] = parked.pending;
    assert.equal(item.kind, 'approval');
    assert.equal(item.tool, 'kitchen__order_groceries');
    assert.equal(item.details.server, 'kitchen');
    assert.equal(item.details.tool, 'order_groceries');
    assert.equal(item.details.schema.properties.quantity.type, 'integer');
    assert.deepEqual(item.decisions, ['approve', 'reject', 'edit']);
    assert.equal(kitchen.calls.length, before, 'nothing ran before the decision');

    fake.script(reply.text('Ordered.'));
    const decided = await decide(id, { pendingId: item.id, decision: 'approve' });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.equal(toolMessages(decided.body)[0].result.text, 'Ordered 12 × eggs.');
    assert.equal(decided.body.messages.at(-1).text, 'Ordered.');
    const seen = kitchen.calls.slice(before);
    assert.equal(seen.length, 1, 'the server saw the approved call once');
    assert.deepEqual(seen[0]!.args, { item: 'eggs', quantity: 12 });
    assert.equal(seen[0]!.key, `${id}:${item.callId}`, 'the idempotency key rides in _meta');
    assert.ok(kitchen.authorizations.has('Bearer kitchen-secret-token'), 'the header took its value from the environment');
    const history = JSON.stringify(await app.client.workflow.getHandle(`conversation-${id}`).fetchHistory());
    assert.ok(!history.includes('kitchen-secret-token'), 'the secret is not in history');
  });

  test("a rejection's reason reaches the model; an edit that does not fit the schema is refused with 422, one that fits runs", async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'kitchen__order_groceries', args: { item: 'milk', quantity: 2 } }));
    const first = await say(id, 'Order milk');
    fake.script(reply.text('Understood, no milk.'));
    const rejected = await decide(id, { pendingId: first.pending[0].id, decision: 'reject', reason: 'we have oat milk' });
    assert.equal(rejected.status, 200);
    assert.match(toolMessages(rejected.body)[0].result.error, /we have oat milk/);
    assert.match(JSON.stringify(lastFunctionResponse()), /we have oat milk/);

    const before = kitchen.calls.length;
    fake.script(reply.calls({ name: 'kitchen__order_groceries', args: { item: 'butter', quantity: 1 } }));
    const second = await say(id, 'Order butter');
    const pendingId = second.pending[0].id;
    const bad = await decide(id, { pendingId, decision: 'edit', args: { item: 'butter', quantity: 500 } });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    assert.match(JSON.stringify(bad.body), /quantity/);
    const missing = await decide(id, { pendingId, decision: 'edit', args: { quantity: 2 } });
    assert.equal(missing.status, 422);
    assert.match(JSON.stringify(missing.body), /item/);
    fake.script(reply.text('Two butters ordered.'));
    const edited = await decide(id, { pendingId, decision: 'edit', args: { item: 'butter', quantity: 2 } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.equal(toolMessages(edited.body)[0].result.text, 'Ordered 2 × butter.');
    assert.deepEqual(
      kitchen.calls.slice(before).map((call) => call.args),
      [{ item: 'butter', quantity: 2 }],
    );
  });

  test('a gated call that nobody decides times out with its timeout action, and the model is told', async () => {
    const id = await open();
    const before = kitchen.calls.length;
    fake.script(
      reply.calls({ name: 'fridge__order_groceries', args: { item: 'cheese', quantity: 1 } }),
      reply.text('Nobody approved the cheese.'),
    );
    const parked = await say(id, 'Order cheese');
    assert.equal(parked.pending[0].tool, 'fridge__order_groceries');
    const deadline = Date.now() + 15_000;
    let view;
    do {
      await new Promise((resolve) => setTimeout(resolve, 200));
      view = await app.call('GET', `/v1/conversations/${id}`);
    } while (view.body.status !== 'idle' && Date.now() < deadline);
    assert.equal(view.body.status, 'idle');
    assert.match(JSON.stringify(lastFunctionResponse()), /No decision before the deadline/);
    assert.equal(kitchen.calls.length, before, 'the expired call never reached the server');
    const late = await decide(id, { pendingId: parked.pending[0].id, decision: 'approve' });
    assert.equal(late.status, 409);
  });

  test('a tool error reaches the model as the result, and the turn completes', async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'kitchen__broken_oven', args: { celsius: 200 } }), reply.text('The oven is broken, sorry.'));
    const turn = await say(id, 'Preheat the oven');
    assert.deepEqual(turn.pending, []);
    assert.equal(toolMessages(turn)[0].result.error, 'The oven is out of order.');
    assert.match(JSON.stringify(lastFunctionResponse()), /The oven is out of order/);
    assert.equal(turn.messages.at(-1).text, 'The oven is broken, sorry.');
  });

  test('a stdio server that dies is started again on the next use; the dead call is an error the model reads', async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'pantry__power_cut', args: {} }), reply.text('The pantry server went down.'));
    const cut = await say(id, 'Cut the power');
    assert.match(toolMessages(cut)[0].result.error, /The MCP server pantry could not be reached/);
    const cuts = stdioCalls().filter((call) => call.tool === 'power_cut');
    assert.equal(cuts.length, 3, 'each of the three attempts found a new process');
    assert.equal(new Set(cuts.map((call) => call.pid)).size, 3);
    fake.script(reply.calls({ name: 'pantry__lookup_pantry', args: { ingredient: 'rice' } }), reply.text('Rice: 500 g.'));
    const after = await say(id, 'How much rice?');
    assert.equal(toolMessages(after)[0].result.text, 'There are 500 g of rice.');
  });

  test('images are stored like other files and referenced; resource links by URI', async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'kitchen__photo_of_dish', args: { dish: 'paella' } }), reply.text('Here it is.'));
    const turn = await say(id, 'Show me paella');
    const { result } = toolMessages(turn)[0];
    assert.equal(result.text, 'A photo of paella.');
    const [image, link] = result.files;
    assert.equal(image.type, 'image');
    assert.equal(image.mimeType, 'image/png');
    // The local store's URL names the configured port; the test's API listens elsewhere.
    const file = await fetch(`${app.baseUrl}${new URL(image.url).pathname}`);
    assert.equal(file.status, 200, image.url);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await file.arrayBuffer()), Buffer.from(ONE_PIXEL_PNG, 'base64'));
    assert.deepEqual(link, { type: 'resource_link', uri: 'https://kitchen.example/recipes/1', name: 'the recipe' });

    // deleting the conversation erases its files from storage too
    assert.equal((await app.call('DELETE', `/v1/conversations/${id}`)).status, 204);
    assert.equal((await fetch(`${app.baseUrl}${new URL(image.url).pathname}`)).status, 404);
    await assert.rejects(fs.promises.access(path.resolve(app.config.DATA_DIR, 'objects', 'mcp', id)), { code: 'ENOENT' });
  });

  test("a call whose arguments do not fit the server's schema goes back to the model without reaching the server", async () => {
    const id = await open();
    const before = stdioCalls().length;
    fake.script(reply.calls({ name: 'pantry__lookup_pantry', args: { ingredient: '' } }), reply.text('Which ingredient?'));
    const turn = await say(id, 'How much is there?');
    assert.match(toolMessages(turn)[0].result.error, /Invalid arguments for pantry__lookup_pantry: ingredient/);
    assert.equal(stdioCalls().length, before);
  });

  test('when a server says its list changed, the next model step is offered the new list', async () => {
    const id = await open();
    fake.script(reply.calls({ name: 'kitchen__broken_oven', args: { celsius: 180 } }), reply.text('Broken.'));
    await say(id, 'Preheat');
    kitchen.addTool('set_timer');
    await new Promise((resolve) => setTimeout(resolve, 300));
    fake.script(
      reply.calls({ name: 'kitchen__broken_oven', args: { celsius: 180 } }),
      reply.calls({ name: 'kitchen__set_timer', args: {} }),
      reply.text('Timer set.'),
    );
    const turn = await say(id, 'Preheat again, then set a timer');
    const names = fake.requests
      .at(-2)!
      .body.tools!.flatMap((tools) => tools.functionDeclarations ?? [])
      .map((declaration) => declaration.name);
    assert.ok(names.includes('kitchen__set_timer'), names.join(', '));
    assert.equal(toolMessages(turn).at(-1).result.text, 'set_timer ran');
  });
});

describe('MCP elicitation', () => {
  const ask = async (id: string) => {
    fake.script(reply.calls({ name: 'kitchen__confirm_delivery', args: { order: 'A-1' } }));
    const parked = await say(id, 'Book the delivery');
    assert.equal(parked.pending.length, 1, JSON.stringify(parked));
    const [item] = parked.pending;
    assert.equal(item.kind, 'question');
    assert.equal(item.tool, 'kitchen__confirm_delivery');
    assert.equal(item.prompt, 'Which day should we deliver?');
    assert.equal(item.details.server, 'kitchen');
    assert.deepEqual(item.details.schema.required, ['day']);
    assert.deepEqual(item.decisions, ['accept', 'decline', 'cancel']);
    return item;
  };

  test("an answer that fits the server's schema goes back to the server; one that does not is refused with 422", async () => {
    const id = await open();
    const item = await ask(id);
    const bad = await decide(id, { pendingId: item.id, decision: 'accept', args: { day: 'sunday' } });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    assert.match(JSON.stringify(bad.body), /day/);
    fake.script(reply.text('Booked for Monday.'));
    const answered = await decide(id, { pendingId: item.id, decision: 'accept', args: { day: 'monday' } });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(toolMessages(answered.body)[0].result.text, 'Delivery booked for monday.');
    assert.equal(answered.body.messages.at(-1).text, 'Booked for Monday.');
  });

  test('an answer by signal (the Web UI, the CLI) works like one through the API', async () => {
    const id = await open();
    const item = await ask(id);
    fake.script(reply.text('Booked.'));
    await app.client.workflow
      .getHandle(`conversation-${id}`)
      .signal(decisionSignal, { pendingId: item.id, decision: 'accept', args: { day: 'tuesday' } });
    await waitUntilIdle(app, id);
    assert.match(JSON.stringify(lastFunctionResponse()), /Delivery booked for tuesday/);
  });

  const askMenu = async (id: string) => {
    fake.script(reply.calls({ name: 'kitchen__plan_menu', args: { occasion: 'birthday' } }));
    const parked = await say(id, 'Plan the birthday dinner');
    assert.equal(parked.pending.length, 1, JSON.stringify(parked));
    const [item] = parked.pending;
    assert.equal(item.kind, 'question');
    assert.deepEqual(item.details.schema, MENU_SCHEMA, 'the form is given the schema as the server sent it');
    return item;
  };
  const menuAnswer = (turn: { messages: { role: string }[] }) => {
    const text: string = toolMessages(turn)[0].result.text;
    assert.match(text, /^Menu answer: /);
    return JSON.parse(text.replace(/^Menu answer: /, ''));
  };

  test("accepting with {} sends the schema's defaults: the server receives each, with its JSON type", async () => {
    const id = await open();
    const item = await askMenu(id);
    fake.script(reply.text('Planned.'));
    const answered = await decide(id, { pendingId: item.id, decision: 'accept', args: {} });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.deepEqual(menuAnswer(answered.body), {
      guests: 4,
      budget: 25.5,
      vegetarian: true,
      course: 'main',
      cuisine: 'italian',
      allergies: ['nuts'],
      host: 'Sam',
    });
  });

  test('an array-of-enum field is answered with an array; a refusal (422) lists the fields it is about', async () => {
    const id = await open();
    const item = await askMenu(id);
    const bad = await decide(id, {
      pendingId: item.id,
      decision: 'accept',
      args: { guests: 20, allergies: 'nuts', extras: ['wine', 'cake'], contact: 'not an address' },
    });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    const fields = new Set((bad.body.fields as { field: string }[]).map((f) => f.field.split('.')[0]));
    assert.deepEqual([...fields].sort(), ['allergies', 'contact', 'extras', 'guests']);
    assert.match(bad.body.error, /allergies: must be array/);

    fake.script(reply.text('Planned.'));
    const answered = await decide(id, {
      pendingId: item.id,
      decision: 'accept',
      args: { guests: 2, vegetarian: false, course: 'dessert', allergies: ['gluten', 'dairy'], extras: ['wine'], day: '2025-06-01' },
    });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.deepEqual(menuAnswer(answered.body), {
      guests: 2,
      budget: 25.5,
      vegetarian: false,
      course: 'dessert',
      cuisine: 'italian',
      allergies: ['gluten', 'dairy'],
      extras: ['wine'],
      host: 'Sam',
      day: '2025-06-01',
    });
  });

  test('a declined question is declined to the server', async () => {
    const id = await open();
    const item = await ask(id);
    fake.script(reply.text('Not booked.'));
    const declined = await decide(id, { pendingId: item.id, decision: 'decline' });
    assert.equal(declined.status, 200, JSON.stringify(declined.body));
    assert.equal(toolMessages(declined.body)[0].result.text, 'No delivery booked (decline).');
  });

  test('a question left past its deadline is cancelled to the server, and the turn completes', async () => {
    const id = await open();
    await ask(id);
    fake.script(reply.text('Nobody answered.'));
    const deadline = Date.now() + 20_000;
    let view;
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      view = await app.call('GET', `/v1/conversations/${id}`);
    } while (view.body.status !== 'idle' && Date.now() < deadline);
    assert.equal(view.body.status, 'idle');
    assert.match(JSON.stringify(lastFunctionResponse()), /No delivery booked \(cancel\)/);
  });
});
