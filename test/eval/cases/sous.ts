// Sous, through the turn engine (the demo recipe): a change is a PatchSet parked for review; a question is
// answered without one. test/eval/sous-cases.ts (npm run eval:sous) grades the PatchSets' content in depth.
import type { EvalCase, ScriptedRun } from '../types.ts';

export const SOUS_TURN_CASES: EvalCase[] = [
  {
    agent: 'sous',
    name: 'swap butter for olive oil',
    behaviour: 'patchset',
    steps: [{ say: 'swap butter for olive oil', expect: { pending: { kind: 'patchset' }, says: [/olive/i] } }],
  },
  {
    agent: 'sous',
    name: 'a question gets an answer, not a PatchSet',
    behaviour: 'question',
    steps: [
      {
        say: 'how do I know when the pasta is done?',
        expect: {
          pending: 'none',
          says: [/\w/],
          judge:
            'The reply answers how to tell that pasta is done (tasting it, al dente, the package time) and proposes no change to the recipe.',
        },
      },
    ],
  },
];

const swap = {
  assistant_message: 'Olive oil it is.',
  patchSet: {
    patchSetId: 'olive',
    patches: [
      { op: 'update_ingredient', id: 'i2', text: '3 tbsp olive oil' },
      { op: 'update_step', step_id: 's3', text: 'Warm the olive oil in a pan over low heat and soften the garlic for 1 minute.' },
    ],
  },
};

export const SOUS_SCRIPTED: ScriptedRun[] = [
  { case: 'swap butter for olive oil', label: 'a valid PatchSet', replies: [{ answer: swap }], grade: 'pass' },
  {
    case: 'swap butter for olive oil',
    label: 'a PatchSet on an invented ingredient (the validator refuses it)',
    replies: [
      {
        answer: {
          assistant_message: 'Olive oil it is.',
          patchSet: { patchSetId: 'bad', patches: [{ op: 'update_ingredient', id: 'i9', text: 'olive oil' }] },
        },
      },
    ],
    grade: 'fail',
    because: /expected a patchset left waiting, got none/,
  },
  {
    case: 'swap butter for olive oil',
    label: 'only talks about it',
    replies: [{ answer: { assistant_message: 'Sure, olive oil works.', patchSet: null } }],
    grade: 'fail',
    because: /expected a patchset/,
  },

  {
    case: 'a question gets an answer, not a PatchSet',
    label: 'answers',
    replies: [
      { answer: { assistant_message: 'Taste one: it should be tender with a little bite, about the time on the packet.', patchSet: null } },
    ],
    grade: 'pass',
  },
  {
    case: 'a question gets an answer, not a PatchSet',
    label: 'never answers in its schema (three tries)',
    replies: [{ text: 'Taste it.' }, { text: 'Taste it!' }, { text: 'Just taste it.' }],
    grade: 'fail',
    because: /the turn ended without an answer: "The model could not answer \(The sous model gave no valid answer in 3 attempt/,
  },
  {
    case: 'a question gets an answer, not a PatchSet',
    label: 'proposes a change unasked',
    replies: [
      {
        answer: {
          assistant_message: 'Add chili.',
          patchSet: { patchSetId: 'chili', patches: [{ op: 'add_ingredient', text: '1 tsp chili flakes' }] },
        },
      },
    ],
    grade: 'fail',
    because: /expected nothing left waiting, got a patchset/,
  },
];
