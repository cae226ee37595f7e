// npm run eval:sous — the sous behaviour cases (sous-cases.ts) through the sous runtime without Temporal: the
// kernel's context, the response schema, askStructured's schema retries, the validator and the kernel's
// refusals, exactly as a turn runs them. The grader scores each case from what the runtime did with the
// model's answers.
//
// With GEMINI_API_KEY (and optionally GEMINI_BASE_URL, GEMINI_MODEL) every case runs against that model; the
// script prints a table, a score per behaviour and the pass rate, and exits 1 under SOUS_EVAL_THRESHOLD
// (default 0.8). Without a key it grades the scripted answers of sous-scripted.ts (right and wrong ones)
// served by a local Gemini-compatible server through the real @google/genai client, and exits 1 when the
// grader or the runtime treats any of them otherwise than designed; src/agents/sous/test/eval.test.ts does the same in CI.
import { isDeepStrictEqual } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { createGeminiModel } from '../../src/model/gemini.ts';
import { loadPrompt } from '../../src/model/prompts.ts';
import { selectModel } from '../../src/model/select.ts';
import { askStructured, responseSchema } from '../../src/model/structured.ts';
import type { ChatModel } from '../../src/model/types.ts';
import type { AgentKernel, KernelContext } from '../../src/shared/agent-kernel.ts';
import type { ChatMessage, JsonObject, PendingItem } from '../../src/shared/messages.ts';
import { sousKernel } from '../../src/agents/sous/kernel.ts';
import { Patch, type Review, type SousAnswer } from '../../src/agents/sous/schemas.ts';
import type { SousState } from '../../src/agents/sous/state.ts';
import { SOUS_CASES, type SousCase } from './sous-cases.ts';

export interface CaseResult {
  name: string;
  category: SousCase['category'];
  expected: SousCase['expect'];
  /** of the last turn: a PatchSet in review, one the validator refused, none, or no valid answer at all */
  outcome: 'proposal' | 'refused' | 'none' | 'error';
  pass: boolean;
  detail: string;
  /** model calls the runtime made, schema retries included */
  requests: number;
  /** what the runtime told the user (the kernel's messages), every turn */
  said: string[];
  /** the validator's reasons, when it refused the last turn's PatchSet */
  reasons?: string[];
}

export interface RunOptions {
  /** the runtime under test; the real sous kernel unless a test hands it a broken one */
  kernel?: AgentKernel<SousState>;
  /** how many answers the runtime asks for before reporting the output invalid; the runtime's default otherwise */
  schemaAttempts?: number;
}

function kernelContext(openItems: readonly PendingItem[] = []): KernelContext {
  let n = 0;
  return { newId: () => `eval-${++n}`, now: () => new Date(0).toISOString(), openItems };
}

/** The state a case starts from: its recipe, defaults, done steps, overrides and a rejection just before. */
function setUp(kase: SousCase, kernel: AgentKernel<SousState>): SousState {
  let state = kernel.init({ ...(kase.recipe ? { recipe: kase.recipe } : {}), ...(kase.defaults ? { defaults: kase.defaults } : {}) });
  for (const stepId of kase.done ?? []) state = kernel.actions.markStepDone!.apply(state, { stepId }, kernelContext()).state;
  for (const hardAvoid of kase.overrides ?? [])
    state = kernel.actions.overrideHardAvoid!.apply(state, { hardAvoid }, kernelContext()).state;
  if (kase.rejectedBefore) {
    kernel.context(state);
    const proposed = kernel.onAnswer(
      state,
      {
        assistant_message: 'Proposed.',
        patchSet: { patchSetId: REJECTED_ID, patches: kase.rejectedBefore.patches, summary: { title: kase.rejectedBefore.title } },
      },
      kernelContext(),
    );
    if (!proposed.open) throw new Error(`case "${kase.name}": its earlier PatchSet is not valid`);
    const item: PendingItem = { ...proposed.open, id: 'earlier-item' };
    state = kernel.onDecision(proposed.state, item, { pendingId: item.id, decision: 'reject' }, kernelContext()).state;
  }
  return state;
}

const REJECTED_ID = 'earlier';

/**
 * The request after a decision carries context.llm.lastPatchDecision, once; it is cleared after the
 * next successful answer. `contexts` holds the context of every model request, per turn (retries included).
 */
export function lastPatchDecisionProblem(contexts: readonly (readonly JsonObject[])[], patchSetId: string): string | undefined {
  const carried = (context: JsonObject) =>
    (context.llm as { lastPatchDecision?: { patchSetId?: string } } | undefined)?.lastPatchDecision?.patchSetId === patchSetId;
  const first = contexts[0] ?? [];
  if (!first.length || !first.every(carried)) return 'the request after the decision did not carry lastPatchDecision';
  const again = contexts.findIndex((turn, index) => index > 0 && turn.some(carried));
  return again > 0 ? `lastPatchDecision went out again in turn ${again + 1}, after a successful answer` : undefined;
}

/** Whether the model proposed exactly the patches the user rejected just before. */
function repeatsRejected(kase: SousCase, answer: SousAnswer | undefined): boolean {
  if (!kase.rejectedBefore || !answer?.patchSet) return false;
  const normal = (patches: readonly unknown[]) => patches.map((p) => Patch.parse(p));
  return isDeepStrictEqual(normal(answer.patchSet.patches), normal(kase.rejectedBefore.patches));
}

/** MODEL_SCHEMA_ATTEMPTS as the worker has it with no setting. */
const DEFAULT_SCHEMA_ATTEMPTS = loadConfig({}).MODEL_SCHEMA_ATTEMPTS;

export async function runCase(
  model: ChatModel,
  system: string,
  kase: SousCase,
  { kernel = sousKernel, schemaAttempts = DEFAULT_SCHEMA_ATTEMPTS }: RunOptions = {},
): Promise<CaseResult> {
  const base = { name: kase.name, category: kase.category, expected: kase.expect };
  const said: string[] = [];
  const contexts: JsonObject[][] = [];
  let requests = 0;
  try {
    let state = setUp(kase, kernel);
    const recipe = state.recipe;
    const transcript: ChatMessage[] = [];
    let openItems: PendingItem[] = [];
    let answer: SousAnswer | undefined;
    let review: Review | undefined;
    let reasons: string[] | undefined;
    for (const [turn, message] of [kase.message, ...(kase.followUps ?? [])].entries()) {
      transcript.push({ id: `eval-user-${turn}`, role: 'user', text: message });
      const context = kernel.context(state);
      const sent: JsonObject[] = [];
      contexts.push(sent);
      const request = { system, tools: [], context, output: { name: 'sous', schema: responseSchema(kernel.output.schema) } };
      answer = (await askStructured(
        kernel.output.schema,
        schemaAttempts,
        async (correction) => {
          requests += 1;
          sent.push(structuredClone(context));
          const messages = correction
            ? [...transcript, { id: `eval-user-${turn}.correction`, role: 'user' as const, text: correction }]
            : transcript;
          return (await model.generate({ ...request, messages })).text;
        },
        'The sous model',
      )) as SousAnswer;
      const effects = kernel.onAnswer(state, answer, kernelContext(openItems));
      state = effects.state;
      said.push(...(effects.say ?? []));
      const closed = new Set((effects.close ?? []).map((c) => c.id));
      openItems = openItems.filter((item) => !closed.has(item.id));
      if (effects.open) openItems.push({ ...effects.open, id: effects.open.id ?? `eval-item-${turn}` } as PendingItem);
      review = (effects.open?.details as { review?: Review } | undefined)?.review;
      const refused = effects.events?.find((e) => e.type === 'patchset.rejected');
      reasons = refused ? (refused.data as { reasons: string[] }).reasons : undefined;
      transcript.push({ id: `eval-assistant-${turn}`, role: 'assistant', text: kernel.output.text(answer) });
      for (const [i, text] of (effects.say ?? []).entries()) transcript.push({ id: `eval-said-${turn}-${i}`, role: 'assistant', text });
    }
    const outcome = review ? 'proposal' : reasons ? 'refused' : 'none';
    const problems: string[] = [];
    if (outcome !== kase.expect) problems.push(reasons ? `refused: ${reasons.join('; ')}` : `expected ${kase.expect}, got ${outcome}`);
    if (repeatsRejected(kase, answer)) problems.push('re-proposed the PatchSet the user just rejected');
    if (kase.rejectedBefore) {
      const problem = lastPatchDecisionProblem(contexts, REJECTED_ID);
      if (problem) problems.push(problem);
    }
    if (!problems.length && kase.check) {
      const problem = kase.check({ answer: answer!, ...(review ? { review } : {}), ...(reasons ? { reasons } : {}), recipe });
      if (problem) problems.push(problem);
    }
    const detail = problems.length ? problems.join('; ') : answer!.assistant_message;
    return { ...base, outcome, pass: problems.length === 0, detail, requests, said, ...(reasons ? { reasons } : {}) };
  } catch (error) {
    return { ...base, outcome: 'error', pass: false, detail: error instanceof Error ? error.message : String(error), requests, said };
  }
}

export async function runEval(
  model: ChatModel,
  cases: SousCase[] = SOUS_CASES,
  options: RunOptions = {},
): Promise<{ results: CaseResult[]; passRate: number }> {
  const system = await loadPrompt('sous');
  const results: CaseResult[] = [];
  for (const kase of cases) results.push(await runCase(model, system, kase, options));
  return { results, passRate: results.filter((r) => r.pass).length / results.length };
}

/** Passed and total per behaviour (category), in the order the categories first appear. */
export function scoresByBehaviour(results: readonly CaseResult[]): { behaviour: string; passed: number; total: number }[] {
  const scores = new Map<string, { passed: number; total: number }>();
  for (const r of results) {
    const score = scores.get(r.category) ?? { passed: 0, total: 0 };
    score.total += 1;
    if (r.pass) score.passed += 1;
    scores.set(r.category, score);
  }
  return [...scores].map(([behaviour, score]) => ({ behaviour, ...score }));
}

export function formatScores(results: readonly CaseResult[]): string {
  const scores = scoresByBehaviour(results);
  const width = Math.max(...scores.map((s) => s.behaviour.length));
  return scores
    .map((s) => `  ${s.behaviour.padEnd(width)}  ${s.passed}/${s.total} = ${((s.passed / s.total) * 100).toFixed(1)} %`)
    .join('\n');
}

export function formatTable(results: readonly CaseResult[], extra?: { header: string; cells: readonly string[] }): string {
  const rows = results.map((r, i) => [
    r.pass ? 'PASS' : 'FAIL',
    ...(extra ? [extra.cells[i]!] : []),
    r.category,
    r.name,
    r.expected,
    r.outcome,
    r.detail.replace(/\s+/g, ' ').slice(0, 110),
  ]);
  const header = ['', ...(extra ? [extra.header] : []), 'category', 'case', 'expected', 'outcome', 'detail'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function realModel(): Promise<void> {
  const threshold = Number(process.env.SOUS_EVAL_THRESHOLD ?? '0.8');
  const model = selectModel({
    GEMINI_API_KEY: process.env.GEMINI_API_KEY,
    GEMINI_BASE_URL: process.env.GEMINI_BASE_URL,
    GEMINI_MODEL: process.env.GEMINI_MODEL ?? 'gemini-2.5-flash',
  });
  const { results, passRate } = await runEval(model);
  console.log(`Sous eval on ${model.name}: ${results.length} cases\n`);
  console.log(formatTable(results));
  console.log(`\nScore per behaviour:\n${formatScores(results)}`);
  const passed = results.filter((r) => r.pass).length;
  console.log(`\nPass rate: ${passed}/${results.length} = ${(passRate * 100).toFixed(1)} % (threshold ${(threshold * 100).toFixed(0)} %)`);
  if (passRate < threshold) {
    console.log('Below the threshold.');
    process.exitCode = 1;
  }
}

async function scripted(): Promise<void> {
  const { SCRIPTED, caseNamed, scriptedMismatches } = await import('./sous-scripted.ts');
  const { reply, startFakeGemini } = await import('../support/fake-gemini.ts');
  const fake = await startFakeGemini({ apiKey: 'eval-key' });
  try {
    const model = createGeminiModel({ apiKey: 'eval-key', baseUrl: fake.baseUrl, model: 'gemini-2.5-flash' });
    const system = await loadPrompt('sous');
    const results: CaseResult[] = [];
    const mismatches: string[] = [];
    for (const run of SCRIPTED) {
      fake.reset();
      fake.script(...run.replies.map((r) => reply.text(typeof r === 'string' ? r : JSON.stringify(r))));
      const result = await runCase(model, system, caseNamed(run.case), run.kernel ? { kernel: run.kernel } : {});
      results.push(result);
      for (const problem of scriptedMismatches(run, result, fake.requests.length))
        mismatches.push(`${run.case} (${run.label}): ${problem}`);
    }
    console.log(
      'GEMINI_API_KEY is not set: grading the scripted answers of test/eval/sous-scripted.ts, served by a local Gemini-compatible server.\n',
    );
    console.log(
      formatTable(results, {
        header: 'scripted',
        cells: SCRIPTED.map((run) => `${run.grade === 'pass' ? 'right' : 'wrong'}: ${run.label}`),
      }),
    );
    if (mismatches.length) {
      console.log(
        `\nThe grader or the runtime treated ${mismatches.length} scripted answer(s) otherwise than designed:\n${mismatches.map((m) => `  ${m}`).join('\n')}`,
      );
      process.exitCode = 1;
    } else {
      console.log(`\nAll ${SCRIPTED.length} scripted runs graded and enforced as designed. Set GEMINI_API_KEY to evaluate a real model.`);
    }
  } finally {
    await fake.close();
  }
}

if (import.meta.main) await (process.env.GEMINI_API_KEY?.trim() ? realModel() : scripted());
