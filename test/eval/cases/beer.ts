// Beer (a bar's token, its client): a recommendation run parks on the confirmation; the person's yes picks
// a brewery and the reply must not contradict the run.
import type { EvalCase, ScriptedRun } from '../types.ts';

export const BEER_CASES: EvalCase[] = [
  {
    agent: 'beer',
    name: 'recommend new breweries',
    behaviour: 'recommendation',
    open: { as: 'gus' },
    steps: [
      {
        say: 'Recommend some new breweries for us.',
        expect: { calls: [{ name: 'recommend_breweries' }], pending: { kind: 'confirmation', tool: 'recommend_breweries' } },
      },
    ],
  },
  {
    agent: 'beer',
    name: 'recommend, then yes to the first',
    behaviour: 'confirmation',
    open: { as: 'gus' },
    steps: [
      { say: 'Recommend some new breweries for us.' },
      {
        decide: 'yes',
        choice: 'first',
        expect: {
          result: { tool: 'recommend_breweries', match: { answer: 'yes' } },
          pending: 'none',
          mustNotSay: [/could(?: not|n't) find|no breweries/i],
        },
      },
    ],
  },
];

export const BEER_SCRIPTED: ScriptedRun[] = [
  {
    case: 'recommend new breweries',
    label: 'runs the recommendation',
    replies: [{ calls: [{ name: 'recommend_breweries', args: {} }] }],
    grade: 'pass',
  },
  {
    case: 'recommend new breweries',
    label: 'names a brewery from memory',
    replies: [{ text: 'Try Stone Brewing.' }],
    grade: 'fail',
    because: /expected a call to recommend_breweries/,
  },

  {
    case: 'recommend, then yes to the first',
    label: 'sums up the pick',
    replies: [{ calls: [{ name: 'recommend_breweries', args: {} }] }, { text: 'Here is what I found about the brewery you picked.' }],
    grade: 'pass',
  },
  {
    case: 'recommend, then yes to the first',
    label: 'contradicts the run',
    replies: [{ calls: [{ name: 'recommend_breweries', args: {} }] }, { text: 'Sorry, I could not find any breweries.' }],
    grade: 'fail',
    because: /must not/,
  },
];
