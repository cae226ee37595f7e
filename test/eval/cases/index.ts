// Every agent's cases and scripted answers, in the scorecard's order.
import type { EvalCase, ScriptedRun } from '../types.ts';
import { BEER_CASES, BEER_SCRIPTED } from './beer.ts';
import { RECIPES_CASES, RECIPES_SCRIPTED } from './recipes.ts';
import { SOUS_SCRIPTED, SOUS_TURN_CASES } from './sous.ts';
import { SUPPORT_CASES, SUPPORT_SCRIPTED } from './support.ts';

export const EVAL_CASES: EvalCase[] = [...SUPPORT_CASES, ...RECIPES_CASES, ...SOUS_TURN_CASES, ...BEER_CASES];
export const EVAL_SCRIPTED: ScriptedRun[] = [...SUPPORT_SCRIPTED, ...RECIPES_SCRIPTED, ...SOUS_SCRIPTED, ...BEER_SCRIPTED];

export function caseNamed(name: string): EvalCase {
  const found = EVAL_CASES.find((kase) => kase.name === name);
  if (!found) throw new Error(`no eval case named "${name}"`);
  return found;
}
