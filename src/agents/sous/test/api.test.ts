// The sous agent through the API, with the real @google/genai client against a scripted Gemini-compatible
// server: a swap proposed, reviewed and accepted; a rejection reaching the next request once; PatchSets
// refused before review; steps marked done; a PatchSet expired by a step done while it waited.
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { readEventsAfter } from '../../../db/conversations.ts';
import { asUser } from '../../../db/pool.ts';
import { CONTEXT_MARKER } from '../../../model/gemini.ts';
import { type FakeGemini, type RecordedRequest, reply } from '../../../../test/support/fake-gemini.ts';
import { geminiApp } from '../../../../test/support/gemini-app.ts';
import { BOB, type TestApp } from '../../../../test/support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;

geminiApp(
  {
    checkKey: true,
    env: {
      MODEL_MAX_ATTEMPTS: '2',
      MODEL_TIMEOUT: '10s',
      MODEL_SCHEMA_ATTEMPTS: '3',
    },
  },
  (parts) => void ({ fake, app } = parts),
);
beforeEach(() => fake.reset());

const RECIPE = {
  title: 'Pancakes',
  servings: 2,
  ingredients: [
    { id: 'i1', text: '200 g flour' },
    { id: 'i2', text: '300 ml milk' },
    { id: 'i3', text: '2 eggs' },
    { id: 'i4', text: '30 g butter, melted' },
  ],
  steps: [
    { id: 's1', text: 'Whisk the flour, milk and eggs into a smooth batter.' },
    { id: 's2', text: 'Stir in the melted butter and rest the batter for 10 minutes.' },
    { id: 's3', text: 'Fry ladlefuls of batter in a hot pan with a little butter.' },
    { id: 's4', text: 'Serve warm.' },
  ],
};

async function open(body: Record<string, unknown> = {}): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', {
    body: { agent: 'sous', recipe: RECIPE, defaults: { hardAvoids: ['peanut'], portions: 2 }, ...body },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}
const say = (id: string, text: string) => app.call('POST', `/v1/conversations/${id}/messages`, { body: { text } });
const decide = (id: string, body: Record<string, unknown>) => app.call('POST', `/v1/conversations/${id}/decisions`, { body });
const view = async (id: string) => (await app.call('GET', `/v1/conversations/${id}`)).body;
const done = (id: string, stepId: string) => app.call('POST', `/v1/conversations/${id}/steps/${stepId}/done`);
const answer = (assistant_message: string, patchSet: unknown = null) => reply.text(JSON.stringify({ assistant_message, patchSet }));
const events = (id: string) => asUser(app.pool, 'alice', (db) => readEventsAfter(db, id, 0));

/** The context part of a request's system instruction, parsed; and everything the user's side carried. */
function contextOf(request: RecordedRequest): any {
  const parts = request.body.systemInstruction?.parts ?? [];
  const found = parts.filter((part) => part.text?.startsWith(CONTEXT_MARKER));
  assert.equal(found.length, 1, 'one context part');
  return JSON.parse(found[0]!.text!.slice(CONTEXT_MARKER.length));
}
const userText = (request: RecordedRequest) => JSON.stringify((request.body.contents ?? []).filter((content) => content.role === 'user'));

const SWAP = {
  patchSetId: 'swap-butter',
  patches: [
    { op: 'update_ingredient', id: 'i4', text: '2 tbsp olive oil' },
    { op: 'update_step', step_id: 's2', text: 'Stir in the olive oil and rest the batter for 10 minutes.' },
    { op: 'update_step', step_id: 's3', text: 'Fry ladlefuls of batter in a hot pan with a little olive oil.' },
  ],
  summary: { title: 'Swap butter for olive oil', bullets: ['butter → olive oil'], impacted: { ingredientsModified: 99 } },
};

describe('a swap, reviewed and accepted', () => {
  test('the PatchSet is reviewed with its diff and counts, and accepting gives exactly the end state', async () => {
    const id = await open();
    fake.script(answer('Olive oil works: here is the swap.', SWAP));
    const turn = await say(id, 'Swap the butter for olive oil');
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.equal(turn.body.messages.at(-1).text, 'Olive oil works: here is the swap.');
    const [item] = turn.body.pending;
    assert.equal(item.kind, 'patchset');
    assert.deepEqual(item.decisions, ['accept', 'reject']);

    // The request: JSON with a response schema, the recipe as a context part, never in the user's text.
    const request = fake.requests[0]!;
    assert.equal(request.body.generationConfig?.responseMimeType, 'application/json');
    assert.ok((request.body.generationConfig as any).responseJsonSchema.properties.patchSet);
    const context = contextOf(request);
    assert.equal(context.recipeVersion, 1);
    assert.equal(context.recipe.ingredients[3].text, '30 g butter, melted');
    assert.deepEqual(context.defaults, { hardAvoids: ['peanut'], portions: 2 });
    assert.equal(context.llm, undefined);
    assert.doesNotMatch(userText(request), /recipeVersion|30 g butter/);
    assert.match(userText(request), /Swap the butter for olive oil/);

    const seen = await view(id);
    assert.equal(seen.recipe.version, 1);
    assert.deepEqual(seen.defaults, { hardAvoids: ['peanut'], portions: 2 });
    const { review, patchSet } = seen.pendingPatchSet;
    assert.equal(seen.pendingPatchSet.pendingId, item.id);
    assert.equal(patchSet.baseVersion, 1);
    assert.deepEqual(
      review.ingredients.map((i: any) => [i.id, i.change]),
      [
        ['i1', 'unchanged'],
        ['i2', 'unchanged'],
        ['i3', 'unchanged'],
        ['i4', 'modified'],
      ],
    );
    assert.equal(review.ingredients[3].oldText, '30 g butter, melted');
    assert.equal(review.ingredients[3].text, '2 tbsp olive oil');
    assert.deepEqual(
      review.steps.map((s: any) => s.change),
      ['unchanged', 'modified', 'modified', 'unchanged'],
    );
    // counted by the server, whatever the model claimed
    assert.deepEqual(review.summary.impacted, {
      ingredientsAdded: 0,
      ingredientsModified: 1,
      ingredientsRemoved: 0,
      stepsAdded: 0,
      stepsModified: 2,
      stepsRemoved: 0,
    });

    const accepted = await decide(id, { pendingId: item.id, decision: 'accept' });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.match(accepted.body.messages[0].text, /Accepted: Swap butter for olive oil.*version 2/);
    const after = await view(id);
    assert.deepEqual(after.recipe, review.endState);
    assert.equal(after.recipe.version, 2);
    assert.equal(after.pendingPatchSet, null);
    assert.equal(after.decisions.at(-1).decision, 'accepted');
    const decided = (await events(id)).filter((e) => e.type === 'patchset.decided');
    assert.equal(decided.length, 1);
    assert.equal((decided[0]!.data as any).patchSetId, 'swap-butter');
    assert.equal((await decide(id, { pendingId: item.id, decision: 'accept' })).status, 409);
  });
});

describe('lastPatchDecision', () => {
  test('a rejection reaches the next request once, outside the user text; a failed call keeps it for the retry', async () => {
    const id = await open();
    fake.script(answer('Here is a swap.', SWAP));
    const proposed = await say(id, 'Swap the butter for olive oil');
    const rejected = await decide(id, { pendingId: proposed.body.pending[0].id, decision: 'reject' });
    assert.equal(rejected.status, 200);
    assert.match(rejected.body.messages[0].text, /Rejected/);
    assert.equal((await view(id)).recipe.version, 1, 'reject leaves the recipe as it was');

    // The next call fails (a non-retryable 400): the decision is kept for the next one.
    fake.script(reply.error(400, 'bad request'));
    const failed = await say(id, 'Hmm, what else?');
    assert.match(failed.body.messages.at(-1).text, /The model could not answer/);
    fake.script(answer('Would you prefer another fat?'), answer('Sure.'));
    const next = await say(id, 'What else could I use?');
    assert.equal(next.body.pending.length, 0);
    await say(id, 'Thanks');

    const [first, kept, carried, cleared] = fake.requests;
    assert.equal(contextOf(first!).llm, undefined);
    for (const request of [kept!, carried!]) {
      assert.deepEqual(contextOf(request).llm.lastPatchDecision, {
        patchSetId: 'swap-butter',
        decision: 'rejected',
        summary: {
          title: 'Swap butter for olive oil',
          bullets: ['butter → olive oil'],
          impacted: {
            ingredientsAdded: 0,
            ingredientsModified: 1,
            ingredientsRemoved: 0,
            stepsAdded: 0,
            stepsModified: 2,
            stepsRemoved: 0,
          },
        },
      });
      assert.doesNotMatch(userText(request), /lastPatchDecision|swap-butter/);
    }
    assert.equal(contextOf(cleared!).llm, undefined, 'cleared after the next successful answer');
    assert.equal(contextOf(cleared!).decisions[0].decision, 'rejected');
  });
});

describe('refused before review', () => {
  const cases: { name: string; patchSet: unknown; reason: RegExp }[] = [
    {
      name: 'touches a done step',
      patchSet: { patchSetId: 'p1', patches: [{ op: 'update_step', step_id: 's1', text: 'Whisk gently.' }] },
      reason: /step s1 is done/,
    },
    {
      name: 'names a missing id',
      patchSet: { patchSetId: 'p2', patches: [{ op: 'update_ingredient', id: 'i9', text: '1 tsp salt' }] },
      reason: /no ingredient "i9"/,
    },
    {
      name: 'conflicts internally',
      patchSet: {
        patchSetId: 'p3',
        patches: [
          { op: 'update_ingredient', id: 'i2', text: '250 ml oat milk' },
          { op: 'remove_ingredient', id: 'i2' },
        ],
      },
      reason: /patches 1 and 2 all change ingredient i2/,
    },
    {
      name: 'brings a hard avoid',
      patchSet: {
        patchSetId: 'p4',
        patches: [
          { op: 'update_ingredient', id: 'i4', text: '2 tbsp peanut oil' },
          { op: 'update_step', step_id: 's3', text: 'Fry in peanut oil.' },
        ],
      },
      reason: /"peanut oil".*avoids \(peanut\)/,
    },
    {
      name: 'removes an ingredient a future step still uses',
      patchSet: { patchSetId: 'p5', patches: [{ op: 'remove_ingredient', id: 'i4' }] },
      reason: /removes i4 \("butter"\) but step s2, s3 still uses it/,
    },
  ];
  for (const { name, patchSet, reason } of cases) {
    test(name, async () => {
      const id = await open();
      assert.equal((await done(id, 's1')).status, 200);
      fake.script(answer('Here you go.', patchSet));
      const turn = await say(id, 'Change something');
      assert.equal(turn.status, 200);
      assert.deepEqual(turn.body.pending, [], 'never reaches review');
      assert.match(turn.body.messages.at(-1).text, /refused before review/);
      const state = await view(id);
      assert.equal(state.pendingPatchSet, null);
      assert.equal(state.recipe.version, 2);
      const refused = (await events(id)).filter((e) => e.type === 'patchset.rejected');
      assert.equal(refused.length, 1);
      assert.match((refused[0]!.data as any).reasons.join('\n'), reason);
    });
  }

  test('an override for this recipe lets the avoided item through', async () => {
    const id = await open();
    assert.equal((await app.call('POST', `/v1/conversations/${id}/overrides`, { body: { hardAvoid: 'dairy' } })).status, 404);
    const lifted = await app.call('POST', `/v1/conversations/${id}/overrides`, { body: { hardAvoid: 'Peanut' } });
    assert.equal(lifted.status, 200, JSON.stringify(lifted.body));
    assert.deepEqual(lifted.body.hardAvoidOverrides, ['peanut']);
    fake.script(
      answer('Peanut oil it is.', {
        patchSetId: 'p6',
        patches: [
          { op: 'update_ingredient', id: 'i4', text: '2 tbsp peanut oil' },
          { op: 'update_step', step_id: 's2', text: 'Stir in the peanut oil.' },
          { op: 'update_step', step_id: 's3', text: 'Fry in a little peanut oil.' },
        ],
      }),
    );
    const turn = await say(id, 'I know, use peanut oil anyway');
    assert.equal(turn.body.pending[0].kind, 'patchset');
    assert.deepEqual(contextOf(fake.requests[0]!).hardAvoidOverrides, ['peanut']);
  });
});

describe('steps marked done', () => {
  test('404 for an unknown step, idempotent for a done one, a version bump otherwise', async () => {
    const id = await open();
    const unknown = await done(id, 's9');
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.error, /No step "s9"/);
    const first = await done(id, 's1');
    assert.equal(first.status, 200);
    assert.equal(first.body.recipe.version, 2);
    assert.equal(first.body.recipe.steps[0].status, 'done');
    const again = await done(id, 's1');
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.recipe, first.body.recipe);
    assert.equal((await app.call('POST', `/v1/conversations/${id}/steps/s2/done`, { token: BOB })).status, 404, "not the caller's");
    const support = await app.call('POST', '/v1/conversations', { body: { agent: 'support' } });
    assert.equal((await done(support.body.id, 's1')).status, 404);
  });

  test('a step done while a PatchSet waits expires it: a decision on it is a 409 and the recipe is untouched', async () => {
    const id = await open();
    fake.script(answer('Here is a swap.', SWAP));
    const turn = await say(id, 'Swap the butter for olive oil');
    const pendingId = turn.body.pending[0].id;
    const marked = await done(id, 's1');
    assert.equal(marked.status, 200);
    assert.equal(marked.body.pendingPatchSet, null);
    assert.deepEqual(marked.body.pending, []);
    const late = await decide(id, { pendingId, decision: 'accept' });
    assert.equal(late.status, 409);
    assert.match(late.body.error, /not pending any more \(expired\)/);
    const after = await view(id);
    assert.equal(after.recipe.version, 2);
    assert.equal(after.recipe.ingredients[3].text, '30 g butter, melted');
  });

  test('a step done while the model thinks: the PatchSet carries the version the model saw and is refused', async () => {
    const id = await open();
    const held = reply.hold(answer('Here is a swap.', SWAP));
    fake.script(held);
    const turn = say(id, 'Swap the butter for olive oil');
    await held.reached;
    const marked = await done(id, 's2');
    assert.equal(marked.status, 200);
    assert.equal(marked.body.recipe.version, 2);
    held.release();
    const result = await turn;
    assert.deepEqual(result.body.pending, []);
    assert.match(result.body.messages.at(-1).text, /made for version 1 of the recipe, which is now at version 2/);
    assert.equal(contextOf(fake.requests[0]!).recipeVersion, 1);
  });

  test('a new PatchSet supersedes the one waiting', async () => {
    const id = await open();
    fake.script(
      answer('Swap.', SWAP),
      answer('Or a note.', { patchSetId: 'note', patches: [{ op: 'add_note', text: 'Brown the butter first.' }] }),
    );
    const first = await say(id, 'Swap the butter for olive oil');
    const second = await say(id, 'Actually just a note');
    assert.notEqual(second.body.pending[0].id, first.body.pending[0].id);
    assert.equal(second.body.pending.length, 1);
    assert.equal(contextOf(fake.requests[1]!).pendingPatchSet.patchSetId, 'swap-butter', 'the model knows what waits');
    assert.equal((await decide(id, { pendingId: first.body.pending[0].id, decision: 'accept' })).status, 409);
    assert.equal((await decide(id, { pendingId: second.body.pending[0].id, decision: 'accept' })).status, 200);
    assert.deepEqual((await view(id)).recipe.notes, ['Brown the butter first.']);
  });
});

describe('the model answer', () => {
  test('JSON that does not fit is asked again, then reported', async () => {
    const id = await open();
    fake.script(
      reply.text('not json'),
      answer('Fixed.', { patchSetId: 'x', patches: [{ op: 'explode' }] }),
      answer('Here.', { patchSetId: 'n', patches: [{ op: 'add_note', text: 'Rest longer.' }] }),
    );
    const retried = await say(id, 'Add a note');
    assert.equal(retried.body.pending[0].kind, 'patchset');
    assert.equal(fake.requests.length, 3);
    assert.match(JSON.stringify(fake.requests[1]!.body.contents?.at(-1)), /was refused: the answer was not JSON/);

    fake.reset();
    fake.script(reply.text('{}'), reply.text('[]'), reply.text('{"assistant_message": ""}'));
    const failed = await say(id, 'Another note');
    assert.match(failed.body.messages.at(-1).text, /The model could not answer \(.*no valid answer in 3 attempt/);
    assert.equal((await view(id)).pendingPatchSet.patchSet.patchSetId, 'n', 'the waiting PatchSet is untouched');
  });

  test('bad starting points are refused with the field named', async () => {
    const bad = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', defaults: { portions: 0 } } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /defaults\.portions/);
    const notSous = await app.call('POST', '/v1/conversations', { body: { agent: 'support', recipe: RECIPE } });
    assert.equal(notSous.status, 400);
    assert.match(notSous.body.error, /recipe: only for the sous agent/);
    const dup = await app.call('POST', '/v1/conversations', {
      body: { agent: 'sous', recipe: { ...RECIPE, steps: [{ id: 'i1', text: 'x' }] } },
    });
    assert.equal(dup.status, 400);
    assert.match(dup.body.error, /duplicate id "i1"/);
    const nul = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', recipe: { ...RECIPE, steps: ['Whisk\u0000.'] } } });
    assert.equal(nul.status, 400);
    assert.match(nul.body.error, /recipe\.steps\.0: .*must not contain NUL/);
    const demo = await app.call('POST', '/v1/conversations', { body: { agent: 'sous' } });
    assert.equal(demo.status, 201);
    const shown = await view(demo.body.id);
    assert.equal(shown.recipe.title, 'Lemon garlic spaghetti');
    assert.deepEqual(shown.defaults, { hardAvoids: [], portions: 2 });
  });

  test("a saved recipe of the caller's own (recipeId), converted; someone else's is a 404", async () => {
    const mine = randomUUID();
    const bobs = randomUUID();
    const save = (user: string, id: string) =>
      asUser(app.pool, user, (db) =>
        db.query(
          `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, servings, notes)
           VALUES ($1, $2, 'Shakshuka', 'food', $3, $4, 3, 'Best with bread.')`,
          [
            id,
            user,
            JSON.stringify([
              { name: 'eggs', quantity: '4', unit: null, notes: null },
              { name: 'tomatoes', quantity: '400', unit: 'g', notes: 'chopped' },
            ]),
            JSON.stringify(['Simmer the tomatoes.', 'Crack in the eggs and cover.']),
          ],
        ),
      );
    await save('alice', mine);
    await save('bob', bobs);
    const created = await app.call('POST', '/v1/conversations', {
      body: { agent: 'sous', recipeId: mine, defaults: { hardAvoids: ['pork'] } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { recipe, defaults } = await view(created.body.id);
    assert.deepEqual(recipe, {
      title: 'Shakshuka',
      version: 1,
      servings: 3,
      ingredients: [
        { id: 'i1', text: '4 eggs' },
        { id: 'i2', text: '400 g tomatoes, chopped' },
      ],
      steps: [
        { id: 's1', text: 'Simmer the tomatoes.', status: 'todo' },
        { id: 's2', text: 'Crack in the eggs and cover.', status: 'todo' },
      ],
      notes: ['Best with bread.'],
    });
    assert.deepEqual(defaults, { hardAvoids: ['pork'], portions: 3 });
    const other = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', recipeId: bobs } });
    assert.equal(other.status, 404);
    assert.equal((await app.call('POST', '/v1/conversations', { body: { agent: 'sous', recipeId: 'nope' } })).status, 400);
    const both = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', recipeId: mine, recipe: RECIPE } });
    assert.equal(both.status, 400);
    assert.match(both.body.error, /either recipe or recipeId/);
  });
});

describe('saving the changed recipe to My recipes', () => {
  const saveVersion = (id: string, body: unknown = {}, token?: string) =>
    app.call('POST', `/v1/conversations/${id}/recipe/save`, { body, ...(token ? { token } : {}) });

  test('a new recipe beside the original, only after an accepted change; the same content is the same recipe', async () => {
    const id = await open();
    const before = await saveVersion(id);
    assert.equal(before.status, 409);
    assert.match(before.body.error, /nothing new to save/);

    fake.script(answer('Here is the swap.', SWAP));
    const turn = await say(id, 'Swap the butter for olive oil');
    assert.equal((await decide(id, { pendingId: turn.body.pending[0].id, decision: 'accept' })).status, 200);
    assert.equal((await view(id)).acceptedChanges, 1);

    const first = await saveVersion(id);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.deepEqual(
      { ...first.body, recipeId: undefined },
      { recipeId: undefined, name: 'Pancakes (changed)', version: 2, created: true },
    );
    const stored = (await app.call('GET', `/v1/recipes/${first.body.recipeId}`)).body;
    assert.deepEqual(
      { type: stored.recipe_type, servings: stored.servings, conversation: stored.conversation_id, steps: stored.instructions.length },
      { type: 'food', servings: 2, conversation: id, steps: 4 },
    );
    assert.deepEqual(stored.ingredients, [
      { name: 'flour', quantity: '200', unit: 'g', notes: null },
      { name: 'milk', quantity: '300', unit: 'ml', notes: null },
      { name: 'eggs', quantity: '2', unit: null, notes: null },
      { name: 'olive oil', quantity: '2', unit: 'tbsp', notes: null },
    ]);

    // a double click: both answer the one recipe
    const [a, b] = await Promise.all([saveVersion(id), saveVersion(id)]);
    assert.deepEqual([a.status, b.status, a.body.recipeId, b.body.recipeId], [200, 200, first.body.recipeId, first.body.recipeId]);
    assert.equal(a.body.created, false);

    // once that copy is deleted, saving again makes a new one; a name of the cook's own is another content
    await app.adminQuery('UPDATE saved_recipes SET is_deleted = true WHERE id = $1', [first.body.recipeId]);
    const again = await saveVersion(id);
    assert.equal(again.status, 201);
    assert.notEqual(again.body.recipeId, first.body.recipeId);
    const named = await saveVersion(id, { name: 'Olive oil pancakes' });
    assert.deepEqual([named.status, named.body.name], [201, 'Olive oil pancakes']);
    assert.equal((await saveVersion(id, { name: '' })).status, 400);

    // someone else's conversation, or one that is not a sous conversation, is not found
    assert.equal((await saveVersion(id, {}, BOB)).status, 404);
    const rows = await app.adminQuery<{ n: number }>(
      "SELECT count(*)::int AS n FROM saved_recipes WHERE conversation_id = $1 AND user_id = 'alice'",
      [id],
    );
    assert.equal(rows[0]!.n, 3);
  });

  test('a copy of a saved recipe keeps its type, times and tags, and its ingredients as they were stored', async () => {
    const original = randomUUID();
    await asUser(app.pool, 'alice', (db) =>
      db.query(
        `INSERT INTO saved_recipes (id, user_id, name, recipe_type, ingredients, instructions, prep_time, cook_time, servings, tags)
         VALUES ($1, 'alice', 'Sweet pancakes', 'dessert', $2, $3, 5, 15, 2, '["brunch"]')`,
        [
          original,
          JSON.stringify([
            { name: 'flour', quantity: '200', unit: 'g', notes: 'sifted' },
            { name: 'butter', quantity: '30', unit: 'g', notes: null },
          ]),
          JSON.stringify(['Whisk the batter with the butter.', 'Fry.']),
        ],
      ),
    );
    const created = await app.call('POST', '/v1/conversations', { body: { agent: 'sous', recipeId: original } });
    const id = created.body.id as string;
    assert.equal((await view(id)).savedRecipeId, original);
    fake.script(
      answer('Oil it is.', {
        patchSetId: 'oil',
        patches: [
          { op: 'update_ingredient', id: 'i2', text: '2 tbsp sunflower oil' },
          { op: 'update_step', step_id: 's1', text: 'Whisk the batter with the oil.' },
        ],
      }),
    );
    const turn = await say(id, 'use oil');
    await decide(id, { pendingId: turn.body.pending[0].id, decision: 'accept' });
    const saved = await saveVersion(id);
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    assert.equal(saved.body.name, 'Sweet pancakes (changed)');
    const copy = (await app.call('GET', `/v1/recipes/${saved.body.recipeId}`)).body;
    assert.deepEqual(
      {
        type: copy.recipe_type,
        prep: copy.prep_time,
        cook: copy.cook_time,
        tags: copy.tags,
        ingredients: copy.ingredients,
        image: copy.image_url,
      },
      {
        type: 'dessert',
        prep: 5,
        cook: 15,
        tags: ['brunch'],
        ingredients: [
          { name: 'flour', quantity: '200', unit: 'g', notes: 'sifted' },
          { name: 'sunflower oil', quantity: '2', unit: 'tbsp', notes: null },
        ],
        image: null,
      },
    );
    const kept = (await app.call('GET', `/v1/recipes/${original}`)).body;
    assert.deepEqual([kept.name, kept.ingredients[1].name, kept.is_deleted], ['Sweet pancakes', 'butter', false]);
  });

  test('the OpenAPI document describes the route', async () => {
    const doc = await app.call('GET', '/openapi.json', { token: '' });
    const post = doc.body.paths['/v1/conversations/{id}/recipe/save']?.post;
    assert.ok(post, 'the route is in the document');
    assert.deepEqual(
      Object.keys(post.responses)
        .filter((s) => s.startsWith('2'))
        .sort(),
      ['200', '201'],
    );
    assert.ok(doc.body.components.schemas.SavedVersion.properties.recipeId);
    assert.ok(doc.body.components.schemas.SaveVersionBody.properties.name);
    assert.ok(doc.body.components.schemas.SousState.properties.acceptedChanges);
  });
});
