// Context caching (issue 44, item 4): the cached part of a call's input, as Gemini reports it, reaches the usage
// event, the usage ledger, the conversation's usage (GET) and the metrics. The real @google/genai client against
// the scripted Gemini server, the real turn engine (Temporal dev server, PostgreSQL).
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { type FakeGemini, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import type { TestApp } from '../support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp({ checkKey: true, env: { MODEL_TIMEOUT: '10s', METRICS_ENABLED: 'true' } }, (parts) => void ({ fake, app } = parts));
beforeEach(() => fake.reset());

async function conversation(agent = 'support'): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent, title: 'cache' } });
  assert.equal(created.status, 201);
  return created.body.id;
}
const say = (id: string, text: string) => app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });

/** The sum of a metric's samples whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const found = Object.fromEntries(
      [...(line.match(/^[^{]*\{([^}]*)\}/)?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) total += Number(line.split(' ').at(-1));
  }
  return total;
}
const cachedMetric = async () =>
  sample(await (await fetch(`${app.baseUrl}/metrics`)).text(), 'brigade_model_cached_input_tokens_total', {
    agent: 'support',
    model: 'gemini-2.5-flash',
  });

describe('cached input tokens', () => {
  test('reach the usage event, the ledger, the conversation usage and the metrics', async () => {
    const id = await conversation();
    const before = await cachedMetric();
    fake.script(
      reply.calls({ name: 'get_user_info', args: { key: 'email', value: 'john@gmail.com' } }),
      reply.text('John Doe has three orders.', {
        usage: { promptTokenCount: 5000, candidatesTokenCount: 8, totalTokenCount: 5008, cachedContentTokenCount: 4096 },
      }),
    );
    const turn = await say(id, 'Who is john@gmail.com?');
    assert.equal(turn.status, 200, JSON.stringify(turn.body));

    const events = await app.adminQuery<{ data: Record<string, unknown> }>(
      `SELECT data FROM events WHERE conversation_id = $1 AND type = 'usage' ORDER BY id`,
      [id],
    );
    assert.equal(events.at(-1)!.data.cachedInputTokens, 4096, 'the usage event carries the cached part');
    assert.equal(events[0]!.data.cachedInputTokens, undefined, 'a call that reported none says none');

    const ledger = await app.adminQuery<{ cached: string | null; input: string }>(
      `SELECT cached_input_tokens AS cached, input_tokens AS input FROM usage_ledger
        WHERE conversation_id = $1 AND kind = 'chat' AND settled ORDER BY settled_at`,
      [id],
    );
    assert.deepEqual(
      ledger.map((row) => (row.cached === null ? null : Number(row.cached))),
      [null, 4096],
    );

    const view = await app.call('GET', `/v1/conversations/${id}`);
    assert.equal(view.status, 200);
    assert.equal(view.body.usage.cachedInputTokens, 4096);
    assert.ok(view.body.usage.inputTokens >= 5000, 'the cached part is part of the input');

    assert.equal((await cachedMetric()) - before, 4096, 'brigade_model_cached_input_tokens_total counts them by model');
  });
});

/** What precedes the transcript in a request, as the wire carries it. */
const prefixOf = (body: Record<string, unknown>) => JSON.stringify({ systemInstruction: body.systemInstruction, tools: body.tools });
const contentsOf = (body: { contents?: unknown[] }) => (body.contents ?? []).map((content) => JSON.stringify(content));

describe('the prefix before the transcript', () => {
  test('is byte-identical from call to call of a conversation, and each request extends the one before it', async () => {
    const id = await conversation();
    const turns = 12;
    for (let turn = 0; turn < turns; turn += 1) {
      fake.script(
        reply.calls({ name: 'get_order_by_id', args: { order_id: String(24601 + (turn % 3)) } }),
        reply.text(`Order ${24601 + (turn % 3)} is on its way (${turn}).`),
      );
      const answered = await say(id, `Where is my order, turn ${turn}?`);
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
    }
    const bodies = fake.requests.map((request) => request.body);
    assert.equal(bodies.length, turns * 2);
    const prefix = prefixOf(bodies[0]!);
    assert.ok(prefix.includes('get_order_by_id'), 'the tools are part of it');
    for (const [index, body] of bodies.entries()) {
      assert.equal(prefixOf(body), prefix, `request ${index} sends the same system instruction and tools, byte for byte`);
      // nothing else sits before the transcript: no per-call field (a step id, a time) beside the three
      assert.deepEqual(
        Object.keys(body).filter((key) => !['contents', 'systemInstruction', 'tools', 'generationConfig'].includes(key)),
        [],
      );
      if (index === 0) continue;
      const before = contentsOf(bodies[index - 1]!);
      assert.deepEqual(contentsOf(body).slice(0, before.length), before, `request ${index} starts with request ${index - 1}'s transcript`);
    }

    // what share of the last request repeats the one before it (what an implicit cache can serve), and what share
    // is the opening alone (system instruction and tools)
    const last = bodies.at(-1)!;
    const bytes = (text: string) => Buffer.byteLength(text);
    const whole = bytes(prefix) + contentsOf(last).reduce((sum, content) => sum + bytes(content), 0);
    const repeated = bytes(prefix) + contentsOf(bodies.at(-2)!).reduce((sum, content) => sum + bytes(content), 0);
    console.log(
      `prefix figures after ${turns} turns (${bodies.length} calls): request ${whole} B, system+tools ${bytes(prefix)} B ` +
        `(${((100 * bytes(prefix)) / whole).toFixed(1)} %), repeated from the call before ${repeated} B (${((100 * repeated) / whole).toFixed(1)} %)`,
    );
  });
});
