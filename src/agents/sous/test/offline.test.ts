// The sous agent on the offline model (no GEMINI_API_KEY), through the API: the documented phrasings
// propose PatchSets that are reviewed and decided; a question and a hard-avoid conflict change nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.stop();
});

const say = async (id: string, text: string) => {
  const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return turn.body;
};
const accept = async (id: string, pendingId: string) => {
  const decided = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId, decision: 'accept' } });
  assert.equal(decided.status, 200, JSON.stringify(decided.body));
  return decided.body;
};
const view = async (id: string) => (await app.call('GET', `/v1/conversations/${id}`)).body;

describe('sous offline', () => {
  test('swap, question, portions, note and a hard-avoid conflict on the demo recipe', async () => {
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', defaults: { hardAvoids: ['peanut'] } } });
    assert.equal(created.status, 201);
    const id = created.body.id;

    const swap = await say(id, 'swap butter for olive oil');
    assert.match(swap.messages.at(-1).text, /^\S/);
    assert.equal(swap.pending[0].kind, 'patchset');
    const review = (await view(id)).pendingPatchSet.review;
    assert.deepEqual(review.ingredients[1], { id: 'i2', change: 'modified', text: '3 tbsp olive oil', oldText: '3 tbsp butter' });
    await accept(id, swap.pending[0].id);
    assert.equal((await view(id)).recipe.ingredients[1].text, '3 tbsp olive oil');

    const question = await say(id, 'Should I add more salt?');
    assert.match(question.messages.at(-1).text, /^That is a question/);
    assert.deepEqual(question.pending, []);

    assert.equal((await app.call('POST', `/v1/conversations/${id}/steps/s1/done`)).status, 200);
    const portions = await say(id, 'make it for 4');
    await accept(id, portions.pending[0].id);
    const scaled = (await view(id)).recipe;
    assert.equal(scaled.servings, 4);
    assert.equal(scaled.ingredients[0].text, '400 g spaghetti');
    assert.equal(scaled.steps[0].status, 'done');
    assert.equal(scaled.version, 4);

    const note = await say(id, 'add a note: warm the bowls');
    await accept(id, note.pending[0].id);
    assert.deepEqual((await view(id)).recipe.notes, ['warm the bowls']);

    const avoid = await say(id, 'add 1 tbsp peanut oil');
    assert.match(avoid.messages.at(-1).text, /^.*hard avoids \(peanut\)/);
    assert.deepEqual(avoid.pending, []);

    // what it does not understand gets its phrasings, and the deployment's state in words: no setting's name
    const other = await say(id, 'hello there');
    assert.match(other.messages.at(-1).text, /runs without a model key\. It understands/);
    assert.doesNotMatch(other.messages.at(-1).text, /\b[A-Z]+_[A-Z_]+\b/);
    assert.deepEqual(other.pending, []);
    const final = await view(id);
    assert.equal(final.recipe.version, 5);
    assert.deepEqual(
      final.decisions.map((d: { decision: string }) => d.decision),
      ['accepted', 'accepted', 'accepted'],
    );
  });
});
