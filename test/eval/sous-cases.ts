// Behaviour cases for the sous agent (npm run eval:sous): each is a recipe at some point of cooking, the
// user's defaults, a message (and maybe follow-ups), and what a good answer does. "proposal" cases need a
// PatchSet that passes the validator and the case's own check; "none" cases need a reply with no PatchSet
// (a question, an ambiguity, a hard-avoid conflict). After a rejection, the grader also fails a case whose
// answer re-proposes the rejected patches or whose requests do not carry lastPatchDecision exactly once.
// In CI these cases grade scripted answers, right and wrong (sous-scripted.ts); with GEMINI_API_KEY, a model.
import type { Recipe, RecipeInput, Review, SousAnswer } from '../../src/agents/sous/schemas.ts';
import { DEMO_RECIPE } from '../../src/agents/sous/demo.ts';

export interface CaseOutcome {
  answer: SousAnswer;
  /** set when the PatchSet passed validation */
  review?: Review;
  /** set when the validator refused the PatchSet */
  reasons?: string[];
  /** the recipe the model saw */
  recipe: Recipe;
}

export interface SousCase {
  name: string;
  category: 'swap' | 'hard-avoid' | 'done-step' | 'question' | 'portions' | 'note' | 'remove' | 'add';
  recipe?: RecipeInput;
  defaults?: { hardAvoids?: string[]; portions?: number };
  /** steps marked done before the message */
  done?: string[];
  /** hard avoids lifted for this recipe */
  overrides?: string[];
  /** a PatchSet the user rejected just before (reaches the model as lastPatchDecision) */
  rejectedBefore?: {
    title: string;
    patches: SousAnswer['patchSet'] extends infer P ? (P extends { patches: infer Q } ? Q : never) : never;
  };
  message: string;
  /** messages of later turns, each answered in turn; the outcome is the last turn's */
  followUps?: string[];
  expect: 'proposal' | 'none';
  /** a problem, or undefined when the outcome is right */
  check?(outcome: CaseOutcome): string | undefined;
}

const PANCAKES: RecipeInput = {
  title: 'Pancakes',
  servings: 2,
  ingredients: [
    { id: 'i1', text: '200 g flour' },
    { id: 'i2', text: '300 ml milk' },
    { id: 'i3', text: '2 eggs' },
    { id: 'i4', text: '1 tbsp sugar' },
    { id: 'i5', text: '1 tbsp oil' },
  ],
  steps: [
    { id: 's1', text: 'Whisk the flour, milk, eggs and sugar into a smooth batter.' },
    { id: 's2', text: 'Rest the batter for 10 minutes.' },
    { id: 's3', text: 'Heat the oil in a pan and fry ladlefuls of batter.' },
    { id: 's4', text: 'Serve warm.' },
  ],
};

// ---- small checks -------------------------------------------------------------------------------

const item = (review: Review | undefined, id: string) => review?.ingredients.find((i) => i.id === id);
const step = (review: Review | undefined, id: string) => review?.steps.find((s) => s.id === id);

const modifiedTo = (id: string, pattern: RegExp) => (o: CaseOutcome) => {
  const found = item(o.review, id);
  if (found?.change !== 'modified') return `ingredient ${id} is ${found?.change ?? 'missing'}, not modified`;
  return pattern.test(found.text) ? undefined : `ingredient ${id} became "${found.text}", expected ${pattern}`;
};
const removed = (id: string) => (o: CaseOutcome) =>
  item(o.review, id)?.change === 'removed' ? undefined : `ingredient ${id} is not removed`;
const untouched =
  (...ids: string[]) =>
  (o: CaseOutcome) => {
    const changed = ids.filter((id) => step(o.review, id)?.change !== 'unchanged');
    return changed.length ? `done step ${changed.join(', ')} changed` : undefined;
  };
const recovers = (o: CaseOutcome) =>
  o.review && (o.review.notes.length > 0 || o.review.steps.some((s) => s.change === 'added'))
    ? undefined
    : 'no note and no recovery step for the done step';
const noFutureMention = (word: RegExp) => (o: CaseOutcome) => {
  const left = o.review?.endState.steps.filter((s) => s.status === 'todo' && word.test(s.text)).map((s) => s.id) ?? [];
  return left.length ? `step ${left.join(', ')} still says ${word}` : undefined;
};
const all =
  (...checks: ((o: CaseOutcome) => string | undefined)[]) =>
  (o: CaseOutcome) => {
    for (const check of checks) {
      const problem = check(o);
      if (problem) return problem;
    }
    return undefined;
  };
const scaled = (id: string, pattern: RegExp, portions: number) => (o: CaseOutcome) => {
  if (o.review?.endState.servings !== portions && o.answer.patchSet?.portions !== portions) return `portions not set to ${portions}`;
  return modifiedTo(id, pattern)(o);
};

export const SOUS_CASES: SousCase[] = [
  // swaps
  {
    name: 'swap butter for olive oil',
    category: 'swap',
    message: 'swap butter for olive oil',
    expect: 'proposal',
    check: all(modifiedTo('i2', /olive oil/i), noFutureMention(/\bbutter\b/i)),
  },
  {
    name: 'swap spaghetti for rice noodles',
    category: 'swap',
    message: 'swap spaghetti for rice noodles',
    expect: 'proposal',
    check: all(modifiedTo('i1', /rice noodles/i), noFutureMention(/\bspaghetti\b/i)),
  },
  {
    name: 'replace garlic with shallot',
    category: 'swap',
    message: 'replace garlic with shallot',
    expect: 'proposal',
    check: modifiedTo('i3', /shallot/i),
  },
  {
    name: 'use lime instead of lemon',
    category: 'swap',
    message: 'use lime instead of lemon',
    expect: 'proposal',
    check: all(modifiedTo('i4', /lime/i), noFutureMention(/\blemon\b/i)),
  },
  {
    name: 'swap milk for oat milk, dairy avoided',
    category: 'swap',
    recipe: PANCAKES,
    defaults: { hardAvoids: ['dairy'] },
    done: ['s1'],
    message: 'swap milk for oat milk',
    expect: 'proposal',
    check: all(modifiedTo('i2', /oat milk/i), untouched('s1'), recovers),
  },
  // hard avoids
  {
    name: 'peanut butter for a peanut avoider',
    category: 'hard-avoid',
    defaults: { hardAvoids: ['peanut'] },
    message: 'swap butter for peanut butter',
    expect: 'none',
  },
  {
    name: 'peanut oil is a peanut derivative',
    category: 'hard-avoid',
    defaults: { hardAvoids: ['peanut'] },
    message: 'swap butter for peanut oil',
    expect: 'none',
  },
  {
    name: 'cream for a dairy avoider',
    category: 'hard-avoid',
    defaults: { hardAvoids: ['dairy'] },
    message: 'add 100 ml cream',
    expect: 'none',
  },
  {
    name: 'breadcrumbs for a gluten avoider',
    category: 'hard-avoid',
    defaults: { hardAvoids: ['gluten'] },
    message: 'add 2 tbsp breadcrumbs',
    expect: 'none',
  },
  {
    name: 'overridden peanut avoid lets peanut oil in',
    category: 'hard-avoid',
    defaults: { hardAvoids: ['peanut'] },
    overrides: ['peanut'],
    message: 'swap butter for peanut oil',
    expect: 'proposal',
    check: modifiedTo('i2', /peanut oil/i),
  },
  // done-step recoveries
  {
    name: 'swap after the butter step is done',
    category: 'done-step',
    done: ['s1', 's2', 's3'],
    message: 'swap butter for olive oil',
    expect: 'proposal',
    check: all(modifiedTo('i2', /olive oil/i), untouched('s1', 's2', 's3'), recovers),
  },
  {
    name: 'remove butter already melted',
    category: 'done-step',
    done: ['s1', 's2', 's3'],
    message: 'remove the butter',
    expect: 'proposal',
    check: all(removed('i2'), untouched('s3')),
  },
  {
    name: 'recovery step after the last done step',
    category: 'done-step',
    done: ['s1', 's2', 's3'],
    message: 'add a step: taste the sauce and add a squeeze of lemon if it is flat',
    expect: 'proposal',
    check: (o) => {
      const added = o.review?.steps.findIndex((s) => s.change === 'added') ?? -1;
      if (added < 0) return 'no step added';
      return o.review!.steps.slice(0, added).every((s) => s.status === 'done')
        ? undefined
        : 'the new step is not right after the done steps';
    },
  },
  {
    name: 'portions with steps done',
    category: 'done-step',
    done: ['s1', 's2'],
    message: 'make it for 6',
    expect: 'proposal',
    check: all(untouched('s1', 's2'), scaled('i1', /600/, 6)),
  },
  // questions: no PatchSet
  { name: 'should I question', category: 'question', message: 'should I salt the water more?', expect: 'none' },
  { name: 'trade-off question', category: 'question', message: 'is olive oil better than butter here?', expect: 'none' },
  { name: 'make-ahead question', category: 'question', message: 'Can I make this ahead of time?', expect: 'none' },
  { name: 'swap of something not in the recipe', category: 'question', message: 'swap anchovies for capers', expect: 'none' },
  {
    name: 'after a rejection, a question gets no PatchSet',
    category: 'question',
    rejectedBefore: { title: 'Swap butter for olive oil', patches: [{ op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' }] },
    message: 'what would you suggest instead?',
    followUps: ['thanks, I will keep the butter then'],
    expect: 'none',
  },
  // portions
  {
    name: 'make it for 4',
    category: 'portions',
    message: 'make it for 4',
    expect: 'proposal',
    check: all(scaled('i1', /400/, 4), scaled('i5', /80/, 4)),
  },
  { name: 'make it for 1', category: 'portions', message: 'make it for 1', expect: 'proposal', check: scaled('i1', /100/, 1) },
  {
    name: 'pancakes for 6',
    category: 'portions',
    recipe: PANCAKES,
    message: 'make it for 6',
    expect: 'proposal',
    check: all(scaled('i2', /900/, 6), scaled('i3', /\b6\b/, 6)),
  },
  // notes, removals, additions
  {
    name: 'a note',
    category: 'note',
    message: 'add a note: keep a cup of pasta water for the sauce',
    expect: 'proposal',
    check: (o) => (o.review?.notes.some((n) => /pasta water/i.test(n)) ? undefined : 'no note about pasta water'),
  },
  {
    name: 'remove the parmesan',
    category: 'remove',
    message: 'remove the parmesan',
    expect: 'proposal',
    check: all(removed('i5'), noFutureMentionUnlessNoted(/parmesan/i)),
  },
  {
    name: 'add chili flakes',
    category: 'add',
    message: 'add 1 tsp chili flakes',
    expect: 'proposal',
    check: (o) => (o.review?.ingredients.some((i) => i.change === 'added' && /chil/i.test(i.text)) ? undefined : 'no chili added'),
  },
];

/** A step may still name a removed ingredient only when a note of the PatchSet explains. */
function noFutureMentionUnlessNoted(word: RegExp) {
  return (o: CaseOutcome) => (o.review?.notes.some((n) => word.test(n)) ? undefined : noFutureMention(word)(o));
}

export { DEMO_RECIPE };
