// The eval harness (npm run eval) on scripted answers, through the real turn engine: on the Gemini wire every
// scripted answer, right and wrong, is graded as designed (the grader catches what it must, for every agent);
// the same cases' right answers pass on the OpenAI-wire and Anthropic-wire servers; and with a key the script
// prints a scorecard with its cost, runs the model-graded check, and exits 1 under the threshold.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { caseNamed, EVAL_CASES, EVAL_SCRIPTED } from '../eval/cases/index.ts';
import { type EvalApp, type ScriptedServer, scriptedEnv, startEvalApp } from '../eval/harness.ts';
import { formatScripted, runScripted, type ScriptedOutcome } from '../eval/run.ts';
import { startFakeAnthropic } from '../support/fake-anthropic.ts';
import { startFakeGemini } from '../support/fake-gemini.ts';
import { startFakeOpenAi } from '../support/fake-openai.ts';
import { wireReply } from '../support/fake-wire.ts';

const SCRIPT = new URL('../eval/run.ts', import.meta.url).pathname;
const KEY = 'eval-test-key-0123456789';

describe('the eval cases', () => {
  test('every agent, every behaviour the issue names, a right and a wrong answer for each case', () => {
    assert.deepEqual([...new Set(EVAL_CASES.map((c) => c.agent))].sort(), ['beer', 'recipes', 'sous', 'support']);
    const behaviours = new Set(EVAL_CASES.map((c) => c.behaviour));
    for (const b of ['lookup', 'cancel', 'refusal', 'save', 'guarded-sql', 'patchset', 'question', 'recommendation', 'confirmation'])
      assert.ok(behaviours.has(b), b);
    assert.ok(
      EVAL_CASES.some((c) => c.steps.length > 1 && !c.steps[0]!.expect),
      'a case with a conversation so far',
    );
    assert.equal(new Set(EVAL_CASES.map((c) => c.name)).size, EVAL_CASES.length, 'names are unique');
    for (const kase of EVAL_CASES) {
      assert.ok(
        EVAL_SCRIPTED.some((r) => r.case === kase.name && r.grade === 'pass'),
        `a right answer for ${kase.name}`,
      );
      assert.ok(
        EVAL_SCRIPTED.some((r) => r.case === kase.name && r.grade === 'fail'),
        `a wrong answer for ${kase.name}`,
      );
    }
    for (const run of EVAL_SCRIPTED) caseNamed(run.case);
  });
});

async function onWire(server: ScriptedServer, runs: typeof EVAL_SCRIPTED, model: string): Promise<ScriptedOutcome[]> {
  const evalApp: EvalApp = await startEvalApp(scriptedEnv(server, KEY));
  try {
    return await runScripted(evalApp, server, runs, model);
  } finally {
    await evalApp.close();
  }
}

describe('scripted answers through the turn engine', () => {
  test('Gemini wire: every right answer passes and every wrong one is caught, for the reason designed', async () => {
    const fake = await startFakeGemini({ apiKey: KEY });
    try {
      const outcomes = await onWire({ wire: 'gemini', fake }, EVAL_SCRIPTED, 'gemini-2.5-flash');
      console.log(formatScripted(outcomes));
      assert.deepEqual(
        outcomes.filter((o) => o.mismatches.length).map((o) => `${o.run.case} (${o.run.label}): ${o.mismatches.join('; ')}`),
        [],
      );
      for (const agent of ['support', 'recipes', 'sous', 'beer']) {
        assert.ok(
          outcomes.some((o) => o.result.agent === agent && o.run.grade === 'fail' && !o.result.pass),
          `a wrong ${agent} answer caught`,
        );
      }
    } finally {
      await fake.close();
    }
  });

  for (const wire of ['openai', 'anthropic'] as const) {
    test(`${wire === 'openai' ? 'OpenAI' : 'Anthropic'} wire: the same cases' right answers pass, and a wrong one is caught`, async () => {
      const fake = wire === 'openai' ? await startFakeOpenAi({ apiKey: KEY }) : await startFakeAnthropic({ apiKey: KEY });
      try {
        const runs = [
          ...EVAL_SCRIPTED.filter((r) => r.grade === 'pass'),
          EVAL_SCRIPTED.find((r) => r.label === 'cancels the wrong order')!,
        ];
        const outcomes = await onWire({ wire, fake }, runs, wire === 'openai' ? 'gpt-4.1-mini' : 'claude-haiku-4-5');
        assert.deepEqual(
          outcomes.filter((o) => o.mismatches.length).map((o) => `${o.run.case} (${o.run.label}): ${o.mismatches.join('; ')}`),
          [],
        );
        assert.equal(outcomes.filter((o) => o.result.pass).length, EVAL_CASES.length);
      } finally {
        await fake.close();
      }
    });
  }
});

describe('npm run eval with a key', () => {
  let fake: Awaited<ReturnType<typeof startFakeOpenAi>>;
  before(async () => {
    fake = await startFakeOpenAi({ apiKey: KEY });
  });
  after(() => fake?.close());

  test('a model that never acts: a scorecard per behaviour with its cost, the judge says why, exit 1 under the threshold', async () => {
    // chat turns (streamed) get a bland answer; the judge's one-shot calls get a failing verdict
    fake.scriptFn((request) =>
      request.stream
        ? wireReply.text('I can only help with that in general terms.', { usage: { input: 1000, output: 20 } })
        : wireReply.text('{"pass": false, "reason": "it answers nothing the person asked"}'),
    );
    const env: Record<string, string | undefined> = {
      ...process.env,
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: fake.baseUrl,
      OPENAI_MODEL: 'gpt-4.1-mini',
      EVAL_AGENTS: 'support',
      EVAL_JUDGE: '1',
      EVAL_THRESHOLD: '0.8',
    };
    delete env.GEMINI_API_KEY;
    delete env.ANTHROPIC_API_KEY;
    const failed = await promisify(execFile)(process.execPath, [SCRIPT], { env, timeout: 120_000 }).then(
      () => assert.fail('expected a non-zero exit'),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    assert.equal(failed.code, 1, failed.stderr);
    const out = failed.stdout;
    assert.match(out, /Eval of gpt-4\.1-mini \(openai\) on \d{4}-\d{2}-\d{2}: 4 cases through the turn engine, model-graded checks on/);
    assert.match(out, /FAIL +support +lookup +look up a customer by email +turn 1: expected a call to get_user_info/);
    assert.match(out, /support \/ refuse to delete every user:\n(?: +- .*\n)* +- turn 1: judge: it answers nothing the person asked/);
    // the refusal case passes on its rules alone but the judge fails it; the others fail on what happened
    assert.match(out, /^support +lookup +0\/1 +0 % +\d+ +\$0\.\d{6}$/m);
    assert.match(out, /^support +cancel +0\/2 +0 % +\d+ +\$0\.\d{6}$/m);
    assert.match(out, /^total +0\/4 +0 %/m);
    // 1000 input and 20 output tokens a call at gpt-4.1-mini's list price ($0.40 and $1.60 per million)
    assert.match(out, /Pass rate: 0\/4 = 0\.0 % \(threshold 80 %\); cost \$0\.\d{6}/);
    assert.match(out, /Below the threshold/);
    const chat = fake.requests.filter((r) => r.stream);
    assert.ok(chat.every((r) => r.body.stream_options?.include_usage === true));
    assert.ok(
      fake.requests.some((r) => !r.stream && r.body.response_format?.type === 'json_schema'),
      'the judge answered with a schema',
    );
  });
});
