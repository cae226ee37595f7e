// Sous's pure modules: the validator's rules, apply, the review and the kernel's bookkeeping, plus
// property tests (fast-check) over random recipes and PatchSets.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { KernelContext } from '../../../shared/agent-kernel.ts';
import type { PendingItem } from '../../../shared/messages.ts';
import { applyPatchSet } from '../apply.ts';
import { avoidHits, introducedAvoids } from '../derivatives.ts';
import { sousKernel } from '../kernel.ts';
import { buildReview } from '../review.ts';
import type { Patch, Recipe, UserDefaults } from '../schemas.ts';
import { type SousState, recipeFromInput } from '../state.ts';
import { validatePatchSet } from '../validate.ts';
import { ingredientName } from '../words.ts';

const RECIPE: Recipe = recipeFromInput({
  title: 'Pancakes',
  servings: 2,
  ingredients: ['200 g flour', '300 ml milk', '2 eggs', '30 g butter, melted'],
  steps: [
    { text: 'Whisk the flour, milk and eggs into a batter.', status: 'done' },
    'Stir in the melted butter and rest for 10 minutes.',
    'Fry ladlefuls in a hot pan.',
    'Serve warm.',
  ],
});
const DEFAULTS: UserDefaults = { hardAvoids: ['peanut', 'dairy'], portions: 2 };
const check = (patches: Patch[], extra: { portions?: number; baseVersion?: number; overrides?: string[]; recipe?: Recipe } = {}) =>
  validatePatchSet({
    recipe: extra.recipe ?? RECIPE,
    defaults: DEFAULTS,
    patchSet: {
      patches,
      baseVersion: extra.baseVersion ?? (extra.recipe ?? RECIPE).version,
      ...(extra.portions ? { portions: extra.portions } : {}),
    },
    ...(extra.overrides ? { overrides: extra.overrides } : {}),
  });

describe('validate', () => {
  test('a clean PatchSet has no reasons', () => {
    assert.deepEqual(
      check([
        { op: 'update_step', step_id: 's3', text: 'Fry small ladlefuls in a hot pan.' },
        { op: 'add_note', text: 'Rest longer if you can.' },
      ]),
      [],
    );
  });
  test('ids must exist; done steps are never touched; new steps never land before a done one', () => {
    assert.match(check([{ op: 'update_ingredient', id: 'i9', text: 'x' }]).join(), /no ingredient "i9"/);
    assert.match(check([{ op: 'remove_ingredient', id: 's1' }]).join(), /no ingredient "s1"/);
    assert.match(check([{ op: 'update_step', step_id: 's9', text: 'x' }]).join(), /no step "s9"/);
    assert.match(check([{ op: 'add_step', after_step_id: 's9', text: 'x' }]).join(), /no step "s9" to add after/);
    assert.match(check([{ op: 'update_step', step_id: 's1', text: 'Whisk harder.' }]).join(), /step s1 is done and cannot be changed/);
    const twoDone = { ...RECIPE, steps: RECIPE.steps.map((s) => (s.id === 's2' ? { ...s, status: 'done' as const } : s)) };
    assert.match(
      check([{ op: 'add_step', after_step_id: 's1', text: 'Taste.' }], { recipe: twoDone }).join(),
      /before step s2, which is already done/,
    );
    assert.deepEqual(
      check([{ op: 'add_step', after_step_id: 's1', text: 'Taste the batter.' }]),
      [],
      'a recovery step right after the done one',
    );
  });
  test('the PatchSet must target the current version', () => {
    assert.match(
      check([{ op: 'add_note', text: 'x' }], { baseVersion: 0 + RECIPE.version - 0 + 1 }).join(),
      /made for version 2 .* now at version 1/,
    );
  });
  test('internal conflicts: two patches on one id', () => {
    assert.match(
      check([
        { op: 'update_step', step_id: 's3', text: 'a' },
        { op: 'update_step', step_id: 's3', text: 'b' },
      ]).join(),
      /patches 1 and 2 all change step s3/,
    );
    assert.match(
      check([
        { op: 'remove_ingredient', id: 'i1' },
        { op: 'update_ingredient', id: 'i1', text: 'rice flour' },
      ]).join(),
      /change ingredient i1/,
    );
  });
  test('a removed ingredient: no future step may still use it, unless steps are updated or a note explains', () => {
    assert.match(check([{ op: 'remove_ingredient', id: 'i4' }]).join(), /removes i4 \("butter"\) but step s2 still uses it/);
    assert.deepEqual(
      check([
        { op: 'remove_ingredient', id: 'i4' },
        { op: 'update_step', step_id: 's2', text: 'Rest the batter for 10 minutes.' },
      ]),
      [],
    );
    assert.deepEqual(
      check([
        { op: 'remove_ingredient', id: 'i4' },
        { op: 'add_note', text: 'Without butter, skip that part of step 2.' },
      ]),
      [],
    );
    // s1 is done: that it used the flour is history, not a future use
    assert.deepEqual(check([{ op: 'remove_ingredient', id: 'i1' }]), []);
    assert.match(
      check([
        { op: 'remove_ingredient', id: 'i2' },
        { op: 'add_step', after_step_id: 's1', text: 'Add a splash of milk.' },
      ]).join(),
      /i2 .* step s5 still uses it/,
    );
  });
  test('hard avoids and their obvious derivatives, unless overridden', () => {
    assert.match(check([{ op: 'add_ingredient', text: '2 tbsp peanut butter' }]).join(), /"peanut butter".*\(peanut\)/);
    assert.match(check([{ op: 'update_ingredient', id: 'i2', text: '300 ml cream' }]).join(), /"cream".*\(dairy\)/);
    assert.match(check([{ op: 'add_step', after_step_id: 's3', text: 'Top with grated cheese.' }]).join(), /"cheese"/);
    assert.deepEqual(check([{ op: 'update_ingredient', id: 'i2', text: '300 ml oat milk' }]), [], 'plant milk is not dairy');
    assert.deepEqual(
      check([{ op: 'update_step', step_id: 's2', text: 'Stir in the melted butter; rest for 15 minutes.' }]),
      [],
      'butter already there is not brought in',
    );
    assert.deepEqual(check([{ op: 'add_ingredient', text: '1 tbsp peanut oil' }], { overrides: ['peanut'] }), []);
    assert.deepEqual(check([{ op: 'add_note', text: 'No peanut butter in this one.' }]), [], 'a note brings nothing in');
    assert.deepEqual(avoidHits('butternut squash, dairy-free cheese', 'dairy'), []);
    assert.deepEqual(
      introducedAvoids('satay sauce', '', ['peanuts']).map((hit) => hit.avoid),
      ['peanuts'],
    );
  });
  test('portions change quantities only', () => {
    assert.deepEqual(
      check(
        [
          { op: 'update_ingredient', id: 'i1', text: '400 g flour' },
          { op: 'update_ingredient', id: 'i3', text: '4 eggs' },
        ],
        { portions: 4 },
      ),
      [],
    );
    assert.match(check([{ op: 'update_ingredient', id: 'i1', text: '400 g rice flour' }], { portions: 4 }).join(), /quantities only/);
    assert.match(check([{ op: 'add_ingredient', text: '1 egg' }], { portions: 4 }).join(), /quantities only/);
  });
  test('never throws on nonsense', () => {
    assert.match(check([{ op: 'nope' } as unknown as Patch]).join(), /unknown operation/);
  });
});

describe('apply and review', () => {
  const patches: Patch[] = [
    { op: 'remove_ingredient', id: 'i2' },
    { op: 'add_ingredient', text: '300 ml oat drink' },
    { op: 'update_ingredient', id: 'i4', text: '2 tbsp oil' },
    { op: 'add_step', after_step_id: 's1', text: 'Whisk in the oat drink.' },
    { op: 'add_step', after_step_id: 's1', text: 'Rest 5 minutes.' },
    { op: 'update_step', step_id: 's2', text: 'Stir in the oil and rest for 10 minutes.' },
    { op: 'add_note', text: 'Oat drink instead of milk.' },
  ];
  test('new ids, adds after one step in patch order, and a ghost where the removed ingredient was', () => {
    const review = buildReview(RECIPE, { patches, summary: { title: 'Dairy-free' } });
    assert.deepEqual(
      review.ingredients.map((i) => `${i.id}:${i.change}`),
      ['i1:unchanged', 'i2:removed', 'i3:unchanged', 'i4:modified', 'i5:added'],
    );
    assert.equal(review.ingredients[1]!.text, '300 ml milk');
    assert.deepEqual(
      review.steps.map((s) => `${s.id}:${s.change}`),
      ['s1:unchanged', 's5:added', 's6:added', 's2:modified', 's3:unchanged', 's4:unchanged'],
    );
    assert.equal(review.steps[3]!.oldText, 'Stir in the melted butter and rest for 10 minutes.');
    assert.deepEqual(review.notes, ['Oat drink instead of milk.']);
    assert.deepEqual(review.summary, {
      title: 'Dairy-free',
      impacted: { ingredientsAdded: 1, ingredientsModified: 1, ingredientsRemoved: 1, stepsAdded: 2, stepsModified: 1, stepsRemoved: 0 },
    });
    assert.deepEqual(review.endState, applyPatchSet(RECIPE, { patches }));
    assert.equal(review.endState.version, 2);
    assert.deepEqual(
      review.endState.ingredients.map((i) => i.id),
      ['i1', 'i3', 'i4', 'i5'],
    );
  });
  test('ingredient names', () => {
    assert.equal(ingredientName('200 g unsalted butter, softened'), 'unsalted butter');
    assert.equal(ingredientName('1 1/2 cups (350 ml) whole milk'), 'whole milk');
    assert.equal(ingredientName('2 cloves garlic'), 'garlic');
  });
});

// ---- the kernel ------------------------------------------------------------------------------------

function ctx(openItems: PendingItem[] = []): KernelContext {
  let n = 0;
  return { newId: () => `id-${++n}`, now: () => '2026-01-01T00:00:00.000Z', openItems };
}
const start = (): SousState =>
  sousKernel.init({
    recipe: { title: 'Pancakes', ingredients: ['200 g flour', '30 g butter'], steps: ['Mix the flour.', 'Fry in butter.', 'Serve.'] },
    defaults: { hardAvoids: ['peanut'] },
  });
const asItem = (open: NonNullable<ReturnType<typeof sousKernel.onAnswer>['open']>, id = open.id ?? 'pending-1'): PendingItem => ({
  ...open,
  id,
});
const note = (text: string, patchSetId = 'p1') => ({
  assistant_message: 'ok',
  patchSet: { patchSetId, patches: [{ op: 'add_note', text }] },
});

describe('kernel', () => {
  test('a step done while the model thinks: the PatchSet is stamped with the version the model saw, and refused', () => {
    const state = start();
    sousKernel.context(state);
    const moved = sousKernel.actions.markStepDone!.apply(state, { stepId: 's1' }, ctx()).state;
    assert.equal(moved.recipe.version, 2);
    const effects = sousKernel.onAnswer(moved, note('Rest it.'), ctx());
    assert.equal(effects.open, undefined);
    assert.equal(effects.events![0]!.type, 'patchset.rejected');
    assert.match(JSON.stringify(effects.events![0]!.data), /made for version 1 .* now at version 2/);
  });

  test('lastPatchDecision: cleared after an answer to a request that carried it, kept when it came later', () => {
    const state = start();
    sousKernel.context(state);
    const proposed = sousKernel.onAnswer(state, note('Rest it.'), ctx());
    const item = asItem(proposed.open!);
    const rejected = sousKernel.onDecision(proposed.state, item, { pendingId: item.id, decision: 'reject' }, ctx()).state;
    assert.equal(rejected.lastPatchDecision?.decision, 'rejected');
    assert.equal(rejected.recipe.version, 1);
    // a request already under way when the decision came: it did not carry it, so it stays
    const midway = { ...rejected, seen: { version: 1 } };
    assert.ok(sousKernel.onAnswer(midway, { assistant_message: 'hm' }, ctx()).state.lastPatchDecision);
    const context = sousKernel.context(rejected);
    assert.equal((context.llm as any).lastPatchDecision.patchSetId, 'p1');
    assert.equal(sousKernel.onAnswer(rejected, { assistant_message: 'hm' }, ctx()).state.lastPatchDecision, undefined);
  });

  test('accept applies, bumps the version and records the decision; a repeated patchSetId gets a fresh one', () => {
    const state = start();
    sousKernel.context(state);
    const proposed = sousKernel.onAnswer(state, note('Rest it.'), ctx());
    const item = asItem(proposed.open!);
    const accepted = sousKernel.onDecision(proposed.state, item, { pendingId: item.id, decision: 'accept' }, ctx());
    assert.deepEqual(accepted.state.recipe, (item.details as any).review.endState);
    assert.deepEqual(
      accepted.state.decisions.map((d) => [d.patchSetId, d.decision, d.version]),
      [['p1', 'accepted', 2]],
    );
    sousKernel.context(accepted.state);
    const again = sousKernel.onAnswer(accepted.state, note('Again.'), ctx());
    assert.notEqual((again.open!.details as any).patchSet.patchSetId, 'p1');
  });

  test('the context shows the PatchSet under review until it is decided, expired or replaced', () => {
    const state = start();
    sousKernel.context(state);
    const first = sousKernel.onAnswer(state, note('Rest it.'), ctx());
    const item = asItem(first.open!, first.open!.id);
    assert.equal((sousKernel.context(first.state).pendingPatchSet as any).patchSetId, 'p1');
    const second = sousKernel.onAnswer(first.state, note('Rest longer.', 'p2'), ctx([item]));
    assert.deepEqual(second.close, [{ id: item.id, reason: 'superseded' }]);
    assert.equal((sousKernel.context(second.state).pendingPatchSet as any).patchSetId, 'p2');
    const refused = sousKernel.onAnswer(
      second.state,
      { assistant_message: 'x', patchSet: { patchSetId: 'p3', patches: [{ op: 'update_step', step_id: 's9', text: 'x' }] } },
      ctx(),
    );
    assert.equal((sousKernel.context(refused.state).pendingPatchSet as any).patchSetId, 'p2', 'a refused PatchSet leaves the waiting one');
    const secondItem = asItem(second.open!, second.open!.id);
    const decided = sousKernel.onDecision(second.state, secondItem, { pendingId: secondItem.id, decision: 'reject' }, ctx());
    assert.equal(sousKernel.context(decided.state).pendingPatchSet, null);
    const expired = sousKernel.actions.markStepDone!.apply(second.state, { stepId: 's1' }, ctx([secondItem]));
    assert.equal(sousKernel.context(expired.state).pendingPatchSet, null);
  });

  test('markStepDone: unknown step refused, done step idempotent, pending PatchSet expired', () => {
    const state = start();
    assert.throws(() => sousKernel.actions.markStepDone!.apply(state, { stepId: 'nope' }, ctx()), /No step "nope"/);
    sousKernel.context(state);
    const item = asItem(sousKernel.onAnswer(state, note('Rest it.'), ctx()).open!);
    const done = sousKernel.actions.markStepDone!.apply(state, { stepId: 's2' }, ctx([item]));
    assert.deepEqual(done.close, [{ id: item.id, reason: 'expired' }]);
    const twice = sousKernel.actions.markStepDone!.apply(done.state, { stepId: 's2' }, ctx());
    assert.equal(twice.state, done.state);
    assert.equal(twice.events, undefined);
  });
});

// ---- properties -----------------------------------------------------------------------------------

const WORDS = ['flour', 'milk', 'eggs', 'butter', 'sugar', 'salt', 'oil', 'lemon', 'garlic', 'rice'];
const textArb = fc
  .tuple(fc.integer({ min: 1, max: 500 }), fc.constantFrom('g', 'ml', 'tbsp', ''), fc.constantFrom(...WORDS))
  .map(([n, unit, word]) => `${n} ${unit} ${word}`.replace(/\s+/g, ' '));
const stepTextArb = fc
  .tuple(fc.constantFrom('Mix the', 'Heat the', 'Add the', 'Serve with', 'Rest the'), fc.constantFrom(...WORDS))
  .map(([verb, word]) => `${verb} ${word}.`);

const recipeArb: fc.Arbitrary<Recipe> = fc
  .record({
    ingredients: fc.array(textArb, { minLength: 1, maxLength: 6 }),
    steps: fc.array(fc.record({ text: stepTextArb, done: fc.boolean() }), { minLength: 1, maxLength: 6 }),
    notes: fc.array(fc.constantFrom('Keep warm.', 'Use a big pan.'), { maxLength: 2 }),
    version: fc.integer({ min: 1, max: 20 }),
  })
  .map(({ ingredients, steps, notes, version }) => ({
    title: 'Random',
    version,
    servings: 2,
    ingredients: ingredients.map((text, i) => ({ id: `i${i + 1}`, text })),
    steps: steps.map(({ text, done }, i) => ({ id: `s${i + 1}`, text, status: done ? ('done' as const) : ('todo' as const) })),
    notes,
  }));

function patchesArb(recipe: Recipe): fc.Arbitrary<Patch[]> {
  const ingredientIds = fc.constantFrom(...recipe.ingredients.map((i) => i.id), 'i99');
  const stepIds = fc.constantFrom(...recipe.steps.map((s) => s.id), 's99');
  const patch: fc.Arbitrary<Patch> = fc.oneof(
    fc.record({ op: fc.constant('add_step' as const), after_step_id: stepIds, text: stepTextArb }),
    fc.record({ op: fc.constant('update_step' as const), step_id: stepIds, text: stepTextArb }),
    fc.record({ op: fc.constant('update_ingredient' as const), id: ingredientIds, text: textArb }),
    fc.record({ op: fc.constant('add_ingredient' as const), text: textArb }),
    fc.record({ op: fc.constant('remove_ingredient' as const), id: ingredientIds }),
    fc.record({
      op: fc.constant('add_note' as const),
      text: fc.constantFrom('Careful now.', 'Skip the butter, flour, milk, eggs, sugar, salt, oil, lemon, garlic and rice if missing.'),
    }),
  );
  return fc.array(patch, { minLength: 1, maxLength: 6 });
}

const caseArb = recipeArb.chain((recipe) => patchesArb(recipe).map((patches) => ({ recipe, patches })));
const NO_AVOIDS: UserDefaults = { hardAvoids: [], portions: 2 };
const isValid = ({ recipe, patches }: { recipe: Recipe; patches: Patch[] }) =>
  validatePatchSet({ recipe, defaults: NO_AVOIDS, patchSet: { patches, baseVersion: recipe.version } }).length === 0;
const validCaseArb = caseArb.filter(isValid);

describe('properties', () => {
  test('applying a valid PatchSet never changes a done step', () => {
    fc.assert(
      fc.property(validCaseArb, ({ recipe, patches }) => {
        const after = applyPatchSet(recipe, { patches });
        for (const step of recipe.steps.filter((s) => s.status === 'done')) {
          assert.deepEqual(
            after.steps.find((s) => s.id === step.id),
            step,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  test('applying a valid PatchSet changes nothing it does not name', () => {
    fc.assert(
      fc.property(validCaseArb, ({ recipe, patches }) => {
        const after = applyPatchSet(recipe, { patches });
        const namedIngredients = new Set(
          patches.flatMap((p) => (p.op === 'update_ingredient' || p.op === 'remove_ingredient' ? [p.id] : [])),
        );
        const namedSteps = new Set(patches.flatMap((p) => (p.op === 'update_step' ? [p.step_id] : [])));
        for (const ingredient of recipe.ingredients.filter((i) => !namedIngredients.has(i.id))) {
          assert.deepEqual(
            after.ingredients.find((i) => i.id === ingredient.id),
            ingredient,
          );
        }
        for (const step of recipe.steps.filter((s) => !namedSteps.has(s.id))) {
          assert.deepEqual(
            after.steps.find((s) => s.id === step.id),
            step,
          );
        }
        // original steps keep their order; notes and everything else stay, only appended to
        const ids = new Set(recipe.steps.map((s) => s.id));
        assert.deepEqual(
          after.steps.filter((s) => ids.has(s.id)).map((s) => s.id),
          recipe.steps.map((s) => s.id),
        );
        assert.deepEqual(after.notes.slice(0, recipe.notes.length), recipe.notes);
        const added = patches.filter((p) => p.op === 'add_ingredient').length;
        assert.equal(
          after.ingredients.length,
          recipe.ingredients.length - patches.filter((p) => p.op === 'remove_ingredient').length + added,
        );
        assert.deepEqual(
          { ...after, ingredients: [], steps: [], notes: [], version: 0 },
          { ...recipe, ingredients: [], steps: [], notes: [], version: 0 },
        );
        assert.equal(after.version, recipe.version + 1);
      }),
      { numRuns: 300 },
    );
  });

  test('accept, then read the recipe: exactly the review’s end state', () => {
    fc.assert(
      fc.property(validCaseArb, fc.boolean(), ({ recipe, patches }, accept) => {
        const state: SousState = { recipe, defaults: NO_AVOIDS, decisions: [], overrides: [] };
        sousKernel.context(state);
        const proposed = sousKernel.onAnswer(state, { assistant_message: 'ok', patchSet: { patchSetId: 'p', patches } }, ctx());
        assert.ok(proposed.open, 'a valid PatchSet reaches review');
        const item = asItem(proposed.open);
        const decided = sousKernel.onDecision(proposed.state, item, { pendingId: item.id, decision: accept ? 'accept' : 'reject' }, ctx());
        const read = sousKernel.view(decided.state, []).recipe;
        assert.deepEqual(read, accept ? (item.details as any).review.endState : recipe);
      }),
      { numRuns: 300 },
    );
  });

  test('the validator never throws, and an invalid PatchSet never reaches review', () => {
    fc.assert(
      fc.property(caseArb, ({ recipe, patches }) => {
        const state: SousState = { recipe, defaults: NO_AVOIDS, decisions: [], overrides: [] };
        sousKernel.context(state);
        const effects = sousKernel.onAnswer(state, { assistant_message: 'ok', patchSet: { patchSetId: 'p', patches } }, ctx());
        assert.equal(effects.open !== undefined, isValid({ recipe, patches }));
      }),
      { numRuns: 300 },
    );
  });
});
