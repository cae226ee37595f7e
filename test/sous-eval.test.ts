// The sous eval (npm run eval:sous): on the offline model every case passes; the script prints its table
// and exits 1 under the threshold, shown with a Gemini-compatible server that never proposes anything.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createOfflineModel } from '../src/model/offline.ts';
import { runEval } from './eval/run-sous.ts';
import { SOUS_CASES } from './eval/sous-cases.ts';
import { type FakeGemini, reply, startFakeGemini } from './support/fake-gemini.ts';

const run = promisify(execFile);
const SCRIPT = new URL('./eval/run-sous.ts', import.meta.url).pathname;

let fake: FakeGemini;
before(async () => {
  fake = await startFakeGemini({ apiKey: 'eval-key' });
});
after(async () => {
  await fake?.close();
});

describe('sous eval', () => {
  test('at least 20 cases over every category, all passing on the offline model', async () => {
    assert.ok(SOUS_CASES.length >= 20);
    const categories = new Set(SOUS_CASES.map((c) => c.category));
    for (const category of ['swap', 'hard-avoid', 'done-step', 'question', 'portions']) assert.ok(categories.has(category as never), category);
    const { results, passRate } = await runEval(createOfflineModel());
    assert.deepEqual(results.filter((r) => !r.pass), []);
    assert.equal(passRate, 1);
  });

  test('the script prints a table and the pass rate; offline it passes', async () => {
    const env = { ...process.env };
    delete env.GEMINI_API_KEY;
    const { stdout } = await run(process.execPath, [SCRIPT], { env });
    assert.match(stdout, /Sous eval on offline: \d+ cases/);
    assert.match(stdout, /PASS +swap +swap butter for olive oil/);
    assert.match(stdout, /Pass rate: (\d+)\/\1 = 100\.0 %/);
  });

  test('a model that never proposes falls under the threshold: exit 1', async () => {
    fake.scriptFn(() => reply.text(JSON.stringify({ assistant_message: 'What would you like?', patchSet: null })));
    const env = { ...process.env, GEMINI_API_KEY: 'eval-key', GEMINI_BASE_URL: fake.baseUrl, GEMINI_MODEL: 'gemini-2.5-flash', SOUS_EVAL_THRESHOLD: '0.8' };
    const failed = await run(process.execPath, [SCRIPT], { env }).then(
      () => assert.fail('expected a non-zero exit'),
      (error: { code: number; stdout: string }) => error,
    );
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /FAIL +swap/);
    assert.match(failed.stdout, /Below the threshold/);
    // the eval asks the way a turn does: JSON with a response schema, the recipe as a context part
    const request = fake.requests[0]!;
    assert.equal(request.body.generationConfig?.responseMimeType, 'application/json');
    assert.ok(request.body.systemInstruction?.parts?.some((part) => part.text?.includes('"recipeVersion"')));
    assert.doesNotMatch(JSON.stringify(request.body.contents), /recipeVersion/);
  });
});
