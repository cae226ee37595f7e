// Scripted model answers for the sous eval's cases, right and wrong, each with the grade the grader must give
// and what the runtime must have done with it: how many model requests (schema retries), what it refused and
// why, what it told the user. src/agents/sous/test/eval.test.ts serves them through the real @google/genai client from
// the scripted Gemini-compatible server; `npm run eval:sous` without GEMINI_API_KEY does the same.
import type { AgentKernel } from '../../src/shared/agent-kernel.ts';
import { sousKernel } from '../../src/agents/sous/kernel.ts';
import type { SousAnswer } from '../../src/agents/sous/schemas.ts';
import type { SousState } from '../../src/agents/sous/state.ts';
import type { CaseResult } from './run-sous.ts';
import { SOUS_CASES, type SousCase } from './sous-cases.ts';

export interface ScriptedRun {
  /** the name of a case in SOUS_CASES */
  case: string;
  /** what is right or wrong about the answers */
  label: string;
  /** one per model request, in order: an answer (sent as its JSON) or raw text */
  replies: (SousAnswer | string)[];
  /** how the grader must score the case */
  grade: 'pass' | 'fail';
  /** what the runtime must have done */
  runtime: {
    outcome: CaseResult['outcome'];
    /** model requests, schema retries included (each takes one scripted reply: all must be used) */
    requests: number;
    /** each must match one of the validator's reasons */
    reasons?: RegExp[];
    /** must match what the runtime told the user (all turns, joined) */
    said?: RegExp;
    /** must match the grader's detail */
    detail?: RegExp;
  };
  /** a broken runtime, to show the grader catches what the runtime gets wrong */
  kernel?: AgentKernel<SousState>;
}

const say = (assistant_message: string, patchSet: SousAnswer['patchSet'] = null): SousAnswer => ({ assistant_message, patchSet });
const REFUSED = /refused before review and nothing changed/;

/** The sous kernel, except that lastPatchDecision is never cleared: every request would carry it again. */
export const RESENDS_LAST_PATCH_DECISION: AgentKernel<SousState> = {
  ...sousKernel,
  onAnswer(state, answer, ctx) {
    const effects = sousKernel.onAnswer(state, answer, ctx);
    return { ...effects, state: { ...effects.state, ...(state.lastPatchDecision ? { lastPatchDecision: state.lastPatchDecision } : {}) } };
  },
};

export const SCRIPTED: ScriptedRun[] = [
  // ---- right answers: the grader passes them ----------------------------------------------------------
  {
    case: 'swap butter for olive oil',
    label: 'ingredient and the step that used it updated',
    replies: [
      say('Olive oil it is.', {
        patchSetId: 'olive',
        patches: [
          { op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' },
          { op: 'update_step', step_id: 's3', text: 'Warm the olive oil in a pan over low heat and soften the garlic for 1 minute.' },
        ],
      }),
    ],
    grade: 'pass',
    runtime: { outcome: 'proposal', requests: 1 },
  },
  {
    case: 'peanut butter for a peanut avoider',
    label: 'asks instead of proposing',
    replies: [say('You avoid peanuts, so I will not add peanut butter. Would olive oil do instead?')],
    grade: 'pass',
    runtime: { outcome: 'none', requests: 1 },
  },
  {
    case: 'swap after the butter step is done',
    label: 'done step left alone, a note for the recovery',
    replies: [
      say('The butter is already in the pan; here is how to go on.', {
        patchSetId: 'olive-late',
        patches: [
          { op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' },
          { op: 'add_note', text: 'The butter is already melted in step 3; drizzle the olive oil over the pasta before serving.' },
        ],
      }),
    ],
    grade: 'pass',
    runtime: { outcome: 'proposal', requests: 1 },
  },
  {
    case: 'make it for 4',
    label: 'quantities doubled, portions set',
    replies: [
      say('Doubled for four.', {
        patchSetId: 'four',
        portions: 4,
        patches: [
          { op: 'update_ingredient', id: 'i1', text: '400 g spaghetti' },
          { op: 'update_ingredient', id: 'i5', text: '80 g parmesan, grated' },
        ],
      }),
    ],
    grade: 'pass',
    runtime: { outcome: 'proposal', requests: 1 },
  },
  {
    case: 'after a rejection, a question gets no PatchSet',
    label: 'no PatchSet in either turn; lastPatchDecision goes out once',
    replies: [say('Lime instead of lemon, or a little chili? Tell me which and I will propose it.'), say('Fine, the butter stays.')],
    grade: 'pass',
    runtime: { outcome: 'none', requests: 2 },
  },
  {
    case: 'add chili flakes',
    label: 'not JSON at first, right once told why',
    replies: [
      'Sure, adding chili flakes!',
      say('Added chili flakes.', { patchSetId: 'chili', patches: [{ op: 'add_ingredient', text: '1 tsp chili flakes' }] }),
    ],
    grade: 'pass',
    runtime: { outcome: 'proposal', requests: 2 },
  },

  // ---- wrong answers: the runtime refuses or reports them, the grader fails them ------------------------
  {
    case: 'swap butter for olive oil',
    label: 'an invented ingredient id',
    replies: [say('Swapped.', { patchSetId: 'olive', patches: [{ op: 'update_ingredient', id: 'i9', text: '3 tbsp olive oil' }] })],
    grade: 'fail',
    runtime: { outcome: 'refused', requests: 1, reasons: [/patch 1 \(update_ingredient\): there is no ingredient "i9"/], said: REFUSED },
  },
  {
    case: 'swap after the butter step is done',
    label: 'a done step rewritten',
    replies: [
      say('Swapped.', {
        patchSetId: 'olive-late',
        patches: [
          { op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' },
          { op: 'update_step', step_id: 's3', text: 'Warm the olive oil in a pan and soften the garlic.' },
        ],
      }),
    ],
    grade: 'fail',
    runtime: {
      outcome: 'refused',
      requests: 1,
      reasons: [/patch 2 \(update_step\): step s3 is done and cannot be changed/],
      said: REFUSED,
    },
  },
  {
    case: 'peanut oil is a peanut derivative',
    label: 'a hard-avoid ingredient proposed instead of a question',
    replies: [
      say('Peanut oil it is.', { patchSetId: 'peanut', patches: [{ op: 'update_ingredient', id: 'i2', text: '3 tbsp peanut oil' }] }),
    ],
    grade: 'fail',
    runtime: {
      outcome: 'refused',
      requests: 1,
      reasons: [/patch 1 \(update_ingredient\): brings .*"peanut oil".*, which the user avoids \(peanut\)/],
      said: REFUSED,
    },
  },
  {
    case: 'remove the parmesan',
    label: 'an ingredient removed while a step to do still uses it',
    replies: [say('Removed.', { patchSetId: 'no-parmesan', patches: [{ op: 'remove_ingredient', id: 'i5' }] })],
    grade: 'fail',
    runtime: { outcome: 'refused', requests: 1, reasons: [/it removes i5 \("parmesan.*"\) but step s5 still uses it/], said: REFUSED },
  },
  {
    case: 'use lime instead of lemon',
    label: 'two patches on one ingredient',
    replies: [
      say('Lime.', {
        patchSetId: 'lime',
        patches: [
          { op: 'update_ingredient', id: 'i4', text: '1 lime, zested and juiced' },
          { op: 'update_ingredient', id: 'i4', text: '2 limes, zested and juiced' },
        ],
      }),
    ],
    grade: 'fail',
    runtime: { outcome: 'refused', requests: 1, reasons: [/patches 1 and 2 all change ingredient i4/], said: REFUSED },
  },
  {
    case: 'make it for 4',
    label: 'a portions change that changes more than quantities',
    replies: [
      say('For four.', { patchSetId: 'four', portions: 4, patches: [{ op: 'update_ingredient', id: 'i1', text: '400 g rice noodles' }] }),
    ],
    grade: 'fail',
    runtime: {
      outcome: 'refused',
      requests: 1,
      reasons: [/patch 1 \(update_ingredient\): a portions change may change quantities only/],
      said: REFUSED,
    },
  },
  {
    case: 'should I question',
    label: 'a question answered with a (valid) PatchSet',
    replies: [
      say('More salt it is.', {
        patchSetId: 'salt',
        patches: [{ op: 'update_step', step_id: 's1', text: 'Bring a large pot of well-salted water to the boil.' }],
      }),
    ],
    grade: 'fail',
    runtime: { outcome: 'proposal', requests: 1, detail: /expected none, got proposal/ },
  },
  {
    case: 'replace garlic with shallot',
    label: 'a valid PatchSet that swaps the wrong ingredient',
    replies: [
      say('Shallot it is.', { patchSetId: 'shallot', patches: [{ op: 'update_ingredient', id: 'i2', text: '2 shallots, minced' }] }),
    ],
    grade: 'fail',
    runtime: { outcome: 'proposal', requests: 1, detail: /ingredient i3 is unchanged, not modified/ },
  },
  {
    case: 'after a rejection, a question gets no PatchSet',
    label: 'the rejected PatchSet proposed again',
    replies: [
      say('How about olive oil?', { patchSetId: 'again', patches: [{ op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' }] }),
      say('Olive oil, then?', { patchSetId: 'again-2', patches: [{ op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' }] }),
    ],
    grade: 'fail',
    runtime: { outcome: 'proposal', requests: 2, detail: /re-proposed the PatchSet the user just rejected/ },
  },
  {
    case: 'add chili flakes',
    label: 'never JSON: reported after the schema retries',
    replies: ['Sure, adding chili!', 'Done, chili added.', 'Chili flakes are in.'],
    grade: 'fail',
    runtime: {
      outcome: 'error',
      requests: 3,
      detail: /^The sous model gave no valid answer in 3 attempt\(s\): the answer was not JSON\.$/,
    },
  },
  {
    case: 'a note',
    label: 'JSON that never fits the schema',
    replies: [
      say('A note.', { patchSetId: 'note', patches: [] }),
      JSON.stringify(
        say('A note.', { patchSetId: 'note', patches: [{ op: 'rewrite_recipe', text: 'Keep a cup of pasta water.' } as never] }),
      ),
      JSON.stringify({ patchSet: { patchSetId: 'note', patches: [{ op: 'add_note', text: 'Keep a cup of pasta water.' }] } }),
    ],
    grade: 'fail',
    runtime: {
      outcome: 'error',
      requests: 3,
      detail: /gave no valid answer in 3 attempt\(s\): the answer did not fit its schema \(assistant_message: /,
    },
  },
  {
    case: 'after a rejection, a question gets no PatchSet',
    label: 'right answers, but a runtime that sends lastPatchDecision a second time',
    replies: [say('Lime instead of lemon, or a little chili? Tell me which and I will propose it.'), say('Fine, the butter stays.')],
    grade: 'fail',
    runtime: { outcome: 'none', requests: 2, detail: /lastPatchDecision went out again in turn 2/ },
    kernel: RESENDS_LAST_PATCH_DECISION,
  },
];

export function caseNamed(name: string): SousCase {
  const kase = SOUS_CASES.find((c) => c.name === name);
  if (!kase) throw new Error(`no sous eval case named "${name}"`);
  return kase;
}

/** How a run's result differs from what its script says the grader and the runtime must do. */
export function scriptedMismatches(run: ScriptedRun, result: CaseResult, requestsServed: number): string[] {
  const problems: string[] = [];
  const { runtime } = run;
  if (result.pass !== (run.grade === 'pass'))
    problems.push(`graded ${result.pass ? 'pass' : 'fail'}, expected ${run.grade} (${result.detail})`);
  if (result.outcome !== runtime.outcome) problems.push(`outcome ${result.outcome}, expected ${runtime.outcome} (${result.detail})`);
  if (result.requests !== runtime.requests) problems.push(`${result.requests} model request(s), expected ${runtime.requests}`);
  if (requestsServed !== runtime.requests) problems.push(`the server answered ${requestsServed} request(s), expected ${runtime.requests}`);
  for (const reason of runtime.reasons ?? []) {
    if (!result.reasons?.some((r) => reason.test(r))) problems.push(`no reason matches ${reason}: ${JSON.stringify(result.reasons ?? [])}`);
  }
  if (runtime.reasons && result.reasons?.length !== runtime.reasons.length)
    problems.push(`reasons ${JSON.stringify(result.reasons)}, expected ${runtime.reasons.length}`);
  if (runtime.said && !runtime.said.test(result.said.join('\n')))
    problems.push(`told the user ${JSON.stringify(result.said)}, expected ${runtime.said}`);
  if (!runtime.said && result.said.length) problems.push(`told the user ${JSON.stringify(result.said)}, expected nothing`);
  if (runtime.detail && !runtime.detail.test(result.detail)) problems.push(`detail "${result.detail}" does not match ${runtime.detail}`);
  return problems;
}
