// npm run eval:sous — runs the sous behaviour cases against the configured model (Gemini with
// GEMINI_API_KEY, GEMINI_BASE_URL and GEMINI_MODEL; the offline model without a key) through the kernel,
// without Temporal: the same context, response schema, schema retries and validator as a real turn. Prints
// a table and the pass rate; exits 1 under SOUS_EVAL_THRESHOLD (default 0.8).
import { loadPrompt } from '../../src/model/prompts.ts';
import { selectModel } from '../../src/model/select.ts';
import { askStructured, responseSchema } from '../../src/model/structured.ts';
import type { ChatModel } from '../../src/model/types.ts';
import type { KernelContext } from '../../src/shared/agent-kernel.ts';
import type { PendingItem } from '../../src/shared/messages.ts';
import { sousKernel } from '../../src/agents/sous/kernel.ts';
import type { Review, SousAnswer } from '../../src/agents/sous/schemas.ts';
import type { SousState } from '../../src/agents/sous/state.ts';
import { SOUS_CASES, type SousCase } from './sous-cases.ts';

export interface CaseResult {
  name: string;
  category: string;
  expected: SousCase['expect'];
  outcome: 'proposal' | 'refused' | 'none' | 'error';
  pass: boolean;
  detail: string;
}

function context(): KernelContext {
  let n = 0;
  return { newId: () => `eval-${++n}`, now: () => new Date(0).toISOString(), openItems: [] };
}

/** The state a case starts from: its recipe, defaults, done steps, overrides and a rejection just before. */
function setUp(kase: SousCase): SousState {
  let state = sousKernel.init({ ...(kase.recipe ? { recipe: kase.recipe } : {}), ...(kase.defaults ? { defaults: kase.defaults } : {}) });
  for (const stepId of kase.done ?? []) state = sousKernel.actions.markStepDone!.apply(state, { stepId }, context()).state;
  for (const hardAvoid of kase.overrides ?? []) state = sousKernel.actions.overrideHardAvoid!.apply(state, { hardAvoid }, context()).state;
  if (kase.rejectedBefore) {
    sousKernel.context(state);
    const proposed = sousKernel.onAnswer(
      state,
      { assistant_message: 'Proposed.', patchSet: { patchSetId: 'earlier', patches: kase.rejectedBefore.patches, summary: { title: kase.rejectedBefore.title } } },
      context(),
    );
    if (!proposed.open) throw new Error(`case "${kase.name}": its earlier PatchSet is not valid`);
    const item: PendingItem = { ...proposed.open, id: 'earlier-item' };
    state = sousKernel.onDecision(proposed.state, item, { pendingId: item.id, decision: 'reject' }, context()).state;
  }
  return state;
}

export async function runCase(model: ChatModel, system: string, kase: SousCase, schemaAttempts = 3): Promise<CaseResult> {
  const base = { name: kase.name, category: kase.category, expected: kase.expect };
  try {
    const state = setUp(kase);
    const recipe = state.recipe;
    const request = { system, tools: [], context: sousKernel.context(state), output: { name: 'sous', schema: responseSchema(sousKernel.output.schema) } };
    const answer = (await askStructured(sousKernel.output.schema, schemaAttempts, async (correction) => {
      const messages = [{ id: 'eval-user', role: 'user' as const, text: kase.message }];
      if (correction) messages.push({ id: 'eval-user.correction', role: 'user', text: correction });
      return (await model.generate({ ...request, messages })).text;
    })) as SousAnswer;
    const effects = sousKernel.onAnswer(state, answer, context());
    const review = (effects.open?.details as { review?: Review } | undefined)?.review;
    const refused = effects.events?.find((e) => e.type === 'patchset.rejected');
    const reasons = refused ? ((refused.data as { reasons: string[] }).reasons) : undefined;
    const outcome = review ? 'proposal' : reasons ? 'refused' : 'none';
    let detail = reasons ? `refused: ${reasons.join('; ')}` : answer.assistant_message;
    let pass = outcome === kase.expect;
    if (pass && kase.check) {
      const problem = kase.check({ answer, ...(review ? { review } : {}), ...(reasons ? { reasons } : {}), recipe });
      if (problem) {
        pass = false;
        detail = problem;
      }
    }
    return { ...base, outcome, pass, detail };
  } catch (error) {
    return { ...base, outcome: 'error', pass: false, detail: error instanceof Error ? error.message : String(error) };
  }
}

export async function runEval(model: ChatModel, cases: SousCase[] = SOUS_CASES): Promise<{ results: CaseResult[]; passRate: number }> {
  const system = await loadPrompt('sous');
  const results: CaseResult[] = [];
  for (const kase of cases) results.push(await runCase(model, system, kase));
  return { results, passRate: results.filter((r) => r.pass).length / results.length };
}

export function formatTable(results: CaseResult[]): string {
  const rows = results.map((r) => [r.pass ? 'PASS' : 'FAIL', r.category, r.name, r.expected, r.outcome, r.detail.replace(/\s+/g, ' ').slice(0, 90)]);
  const header = ['', 'category', 'case', 'expected', 'outcome', 'detail'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const threshold = Number(process.env.SOUS_EVAL_THRESHOLD ?? '0.8');
  const model = selectModel({
    GEMINI_API_KEY: process.env.GEMINI_API_KEY,
    GEMINI_BASE_URL: process.env.GEMINI_BASE_URL,
    GEMINI_MODEL: process.env.GEMINI_MODEL ?? 'gemini-2.5-flash',
  });
  const { results, passRate } = await runEval(model);
  console.log(`Sous eval on ${model.name}: ${results.length} cases\n`);
  console.log(formatTable(results));
  const passed = results.filter((r) => r.pass).length;
  console.log(`\nPass rate: ${passed}/${results.length} = ${(passRate * 100).toFixed(1)} % (threshold ${(threshold * 100).toFixed(0)} %)`);
  if (passRate < threshold) {
    console.log('Below the threshold.');
    process.exitCode = 1;
  }
}

if (import.meta.main) await main();
