// The sous eval (npm run eval:sous) grades what the runtime makes of a model's answers. Here the answers are
// scripted, right and wrong (test/eval/sous-scripted.ts), and reach the runtime through the real
// @google/genai client from the scripted Gemini-compatible server: each wrong one must be refused, retried
// or reported by the runtime exactly as designed, and scored as wrong by the grader; each right one passes.
// The script itself: without a key it grades the scripted answers; with one (here the scripted server, a
// model that never proposes) it prints a score per behaviour and exits 1 under the threshold.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { CONTEXT_MARKER, createGeminiModel } from '../../../model/gemini.ts';
import { systemPrompts } from '../../../model/prompts.ts';
import type { ChatModel } from '../../../model/types.ts';
import { type CaseResult, runCase } from '../../../../test/eval/run-sous.ts';
import { SOUS_CASES } from '../../../../test/eval/sous-cases.ts';
import {
  RESENDS_LAST_PATCH_DECISION,
  SCRIPTED,
  type ScriptedRun,
  caseNamed,
  scriptedMismatches,
} from '../../../../test/eval/sous-scripted.ts';
import { type FakeGemini, type RecordedRequest, reply, startFakeGemini } from '../../../../test/support/fake-gemini.ts';
import { builtInCatalog } from '../../catalog.ts';

const run = promisify(execFile);
const SCRIPT = new URL('../../../../test/eval/run-sous.ts', import.meta.url).pathname;

let fake: FakeGemini;
let model: ChatModel;
let system: string;
before(async () => {
  fake = await startFakeGemini({ apiKey: 'eval-key' });
  model = createGeminiModel({ apiKey: 'eval-key', baseUrl: fake.baseUrl, model: 'gemini-2.5-flash' });
  system = await systemPrompts(builtInCatalog())('sous');
});
after(async () => {
  await fake?.close();
});

/** Serves a run's scripted replies, one per request, and grades its case. */
async function grade(scripted: ScriptedRun): Promise<{ result: CaseResult; requests: RecordedRequest[] }> {
  fake.reset();
  fake.script(...scripted.replies.map((r) => reply.text(typeof r === 'string' ? r : JSON.stringify(r))));
  const result = await runCase(model, system, caseNamed(scripted.case), scripted.kernel ? { kernel: scripted.kernel } : {});
  assert.equal(fake.pendingReplies, 0, 'every scripted reply was asked for');
  return { result, requests: [...fake.requests] };
}

const runNamed = (label: string) => {
  const found = SCRIPTED.find((r) => r.label === label);
  assert.ok(found, label);
  return found;
};
const contextPart = (request: RecordedRequest) =>
  request.body.systemInstruction?.parts?.find((part) => part.text?.startsWith(CONTEXT_MARKER))?.text ?? '';
const contentsText = (request: RecordedRequest) => JSON.stringify(request.body.contents);

describe('the sous eval cases', () => {
  test('at least 20 cases over every behaviour, scripted right and wrong answers for existing cases', () => {
    assert.ok(SOUS_CASES.length >= 20);
    const categories = new Set(SOUS_CASES.map((c) => c.category));
    for (const category of ['swap', 'hard-avoid', 'done-step', 'question', 'portions', 'note', 'remove', 'add'])
      assert.ok(categories.has(category as never), category);
    assert.equal(new Set(SOUS_CASES.map((c) => c.name)).size, SOUS_CASES.length, 'case names are unique');
    for (const scripted of SCRIPTED) caseNamed(scripted.case);
    assert.ok(SCRIPTED.filter((r) => r.grade === 'pass').length >= 5);
    assert.ok(SCRIPTED.filter((r) => r.grade === 'fail').length >= 10);
    for (const outcome of ['refused', 'proposal', 'error', 'none'] as const)
      assert.ok(
        SCRIPTED.some((r) => r.grade === 'fail' && r.runtime.outcome === outcome),
        `a wrong answer ending ${outcome}`,
      );
  });
});

describe('scripted answers through @google/genai: runtime enforcement and grades', () => {
  for (const scripted of SCRIPTED) {
    test(`${scripted.grade === 'pass' ? 'right' : 'wrong'}: ${scripted.case}: ${scripted.label}`, async () => {
      const { result, requests } = await grade(scripted);
      assert.equal(result.pass, scripted.grade === 'pass', `graded ${result.pass ? 'pass' : 'fail'}: ${result.detail}`);
      assert.equal(result.outcome, scripted.runtime.outcome, result.detail);
      assert.equal(requests.length, scripted.runtime.requests);
      assert.deepEqual(scriptedMismatches(scripted, result, requests.length), []);
    });
  }

  test('the eval asks the way a turn does: JSON with a response schema, the recipe as a context part', async () => {
    const { requests } = await grade(runNamed('ingredient and the step that used it updated'));
    const request = requests[0]!;
    assert.equal(request.apiKey, 'eval-key');
    assert.equal(request.body.generationConfig?.responseMimeType, 'application/json');
    assert.match(JSON.stringify(request.body.generationConfig?.responseJsonSchema), /"assistant_message"/, 'the answer schema');
    assert.match(contextPart(request), /"recipeVersion":1/);
    assert.doesNotMatch(contentsText(request), /recipeVersion/);
    assert.match(contentsText(request), /swap butter for olive oil/);
  });

  test('a schema retry tells the model what was wrong, in the next request', async () => {
    const { requests } = await grade(runNamed('not JSON at first, right once told why'));
    assert.doesNotMatch(contentsText(requests[0]!), /previous answer was refused/);
    assert.match(contentsText(requests[1]!), /Your previous answer was refused: the answer was not JSON/);
  });

  test('lastPatchDecision reaches the model in the first request after the decision only', async () => {
    const { requests } = await grade(runNamed('no PatchSet in either turn; lastPatchDecision goes out once'));
    assert.match(contextPart(requests[0]!), /"lastPatchDecision":\{"decision":"rejected","patchSetId":"earlier"/);
    assert.doesNotMatch(contextPart(requests[1]!), /lastPatchDecision/);
    assert.doesNotMatch(contentsText(requests[0]!), /lastPatchDecision/, 'never in user text');
    // the broken runtime of the run that must fail really does send it twice: the grader saw it, not a fluke
    assert.equal(runNamed('right answers, but a runtime that sends lastPatchDecision a second time').kernel, RESENDS_LAST_PATCH_DECISION);
    const broken = await grade(runNamed('right answers, but a runtime that sends lastPatchDecision a second time'));
    assert.match(contextPart(broken.requests[1]!), /lastPatchDecision/);
  });
});

describe('npm run eval:sous', () => {
  test('without GEMINI_API_KEY: grades the scripted answers and says all were treated as designed', async () => {
    const env = { ...process.env };
    delete env.GEMINI_API_KEY;
    const { stdout } = await run(process.execPath, [SCRIPT], { env });
    assert.match(stdout, /GEMINI_API_KEY is not set: grading the scripted answers/);
    assert.match(
      stdout,
      /FAIL +wrong: an invented ingredient id +swap +swap butter for olive oil +proposal +refused +refused: patch 1 \(update_ingredient\): there is no ingredient "i9"/,
    );
    assert.match(stdout, /PASS +right: ingredient and the step that used it updated/);
    assert.match(stdout, new RegExp(`All ${SCRIPTED.length} scripted runs graded and enforced as designed`));
  });

  test('with a model that never proposes: a score per behaviour, and exit 1 under the threshold', async () => {
    fake.reset();
    fake.scriptFn(() => reply.text(JSON.stringify({ assistant_message: 'What would you like?', patchSet: null })));
    const env = {
      ...process.env,
      GEMINI_API_KEY: 'eval-key',
      GEMINI_BASE_URL: fake.baseUrl,
      GEMINI_MODEL: 'gemini-2.5-flash',
      SOUS_EVAL_THRESHOLD: '0.8',
    };
    const failed = await run(process.execPath, [SCRIPT], { env }).then(
      () => assert.fail('expected a non-zero exit'),
      (error: { code: number; stdout: string }) => error,
    );
    fake.scriptFn(undefined);
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /Sous eval on gemini-2\.5-flash: \d+ cases/);
    assert.match(failed.stdout, /FAIL +swap +swap butter for olive oil +proposal +none/);
    // a model that never proposes gets exactly the cases that want no PatchSet, per behaviour
    for (const category of new Set(SOUS_CASES.map((c) => c.category))) {
      const cases = SOUS_CASES.filter((c) => c.category === category);
      const passed = cases.filter((c) => c.expect === 'none').length;
      assert.match(failed.stdout, new RegExp(`^ +${category} +${passed}/${cases.length} = `, 'm'), category);
    }
    const none = SOUS_CASES.filter((c) => c.expect === 'none').length;
    assert.match(failed.stdout, new RegExp(`Pass rate: ${none}/${SOUS_CASES.length} = `));
    assert.match(failed.stdout, /Below the threshold/);
  });
});
