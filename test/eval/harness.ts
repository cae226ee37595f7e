// Runs eval cases through the real turn engine: a Brigade (worker + API) on the Temporal dev server and
// PostgreSQL, the conversation driven over HTTP as a client drives it, each turn's outcome read from the API's
// answer (tool calls, results, items left waiting, the reply) and graded. The model is whatever the settings
// select: a real provider with a key, or one of the wire servers the tests script, fed scripted answers.
import { ALICE, GUS_GREAT_LAKES, type TestApp, startTestApp } from '../support/test-app.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { type FakeGemini, reply as geminiReply } from '../support/fake-gemini.ts';
import { type FakeWire, wireReply } from '../support/fake-wire.ts';
import { ANSWER_TOOL } from '../../src/model/anthropic.ts';
import { costOf, type ModelPrices } from '../../src/model/prices.ts';
import type { JsonObject } from '../../src/shared/messages.ts';
import { gradeStep } from './grade.ts';
import type { CaseResult, EvalCase, EvalReply, StepTrace } from './types.ts';

export interface EvalApp {
  app: TestApp;
  close(): Promise<void>;
}

/** A Brigade for the eval: its model from `env`, OpenBreweryDB's fixture data served locally (the beer cases). */
export async function startEvalApp(env: Record<string, string>): Promise<EvalApp> {
  const breweries: FakeOpenBreweryDb = await startFakeOpenBreweryDb();
  const app = await startTestApp({ env: { OPENBREWERYDB_BASE_URL: breweries.baseUrl, MODEL_TIMEOUT: '60s', ...env } });
  return {
    app,
    async close() {
      await app.stop();
      await breweries.close();
    },
  };
}

/** A model-graded check of free text: a verdict and why. */
export type Judge = (rubric: string, reply: string) => Promise<{ pass: boolean; reason: string }>;

export interface RunOptions {
  model: string;
  prices: ModelPrices;
  judge?: Judge;
}

export async function runCase(app: TestApp, kase: EvalCase, options: RunOptions): Promise<CaseResult> {
  const token = kase.open?.as === 'gus' ? GUS_GREAT_LAKES : ALICE;
  const call = (method: string, path: string, body?: unknown) => app.call(method, path, { token, ...(body === undefined ? {} : { body }) });
  const problems: string[] = [];
  const trace: StepTrace[] = [];
  const created = await call('POST', '/v1/conversations', { agent: kase.agent, title: `eval: ${kase.name}`, ...kase.open?.body });
  if (created.status !== 201) {
    return {
      agent: kase.agent,
      name: kase.name,
      behaviour: kase.behaviour,
      pass: false,
      detail: `could not open: ${created.status} ${JSON.stringify(created.body)}`,
      problems: ['could not open'],
      trace,
      usage: { inputTokens: 0, outputTokens: 0, calls: 0 },
      model: options.model,
    };
  }
  const id: string = created.body.id;
  let last: { pending?: { id: string; options?: { id: string }[] }[] } = {};
  for (const [index, step] of kase.steps.entries()) {
    let answer;
    if ('say' in step) answer = await call('POST', `/v1/conversations/${id}/messages`, { text: step.say });
    else {
      const item = last.pending?.[0];
      if (!item) {
        problems.push(`turn ${index + 1}: nothing was left waiting to ${step.decide}`);
        break;
      }
      answer = await call('POST', `/v1/conversations/${id}/decisions`, {
        pendingId: item.id,
        decision: step.decide,
        ...(step.choice === 'first' && item.options?.[0] ? { choice: item.options[0].id } : {}),
        ...(step.reason ? { reason: step.reason } : {}),
      });
    }
    const body = answer.body ?? {};
    const messages: Record<string, any>[] = Array.isArray(body.messages) ? body.messages : [];
    const stepTrace: StepTrace = {
      step: index,
      status: answer.status,
      calls: messages
        .filter((m) => m.role === 'assistant')
        .flatMap((m) => (m.toolCalls ?? []).map((c: { name: string; args: JsonObject }) => ({ name: c.name, args: c.args }))),
      results: messages.filter((m) => m.role === 'tool').map((m) => ({ tool: m.tool, result: m.result })),
      pending: (body.pending ?? []).map((p: { kind: string; tool: string }) => ({ kind: p.kind, tool: p.tool })),
      text: messages
        .filter((m) => m.role === 'assistant' && m.text)
        .map((m) => m.text)
        .join('\n'),
    };
    trace.push(stepTrace);
    last = body;
    if (step.expect) {
      problems.push(...gradeStep(step.expect, stepTrace));
      if (step.expect.judge && options.judge) {
        const verdict = await options
          .judge(step.expect.judge, stepTrace.text)
          .catch((error: Error) => ({ pass: false, reason: `the judge failed: ${error.message}` }));
        if (!verdict.pass) problems.push(`turn ${index + 1}: judge: ${verdict.reason}`);
      }
    }
    if (answer.status !== 200) break;
  }
  const view = await call('GET', `/v1/conversations/${id}`);
  const usage = view.body?.usage ?? { inputTokens: 0, outputTokens: 0, calls: 0 };
  const cost = costOf(options.prices, options.model, usage);
  return {
    agent: kase.agent,
    name: kase.name,
    behaviour: kase.behaviour,
    pass: problems.length === 0,
    detail: problems.length ? problems.join('; ') : (trace.at(-1)?.text ?? ''),
    problems,
    trace,
    usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, calls: usage.calls },
    model: options.model,
    ...(cost ? { cost } : {}),
  };
}

export type WireName = 'gemini' | 'openai' | 'anthropic';

/** A scripted server of any wire. Chat turns are streamed; one-shot tasks (grounded summaries) are not. */
export type ScriptedServer = { wire: 'gemini'; fake: FakeGemini } | { wire: 'openai' | 'anthropic'; fake: FakeWire };

/**
 * Serves `replies` to the chat turns in order; tasks get a plain grounded summary (Gemini) so the beer runs
 * finish. Returns how many replies were asked for.
 */
export function serveScripted(server: ScriptedServer, replies: readonly EvalReply[]): { used(): number } {
  let used = 0;
  const next = () => (used < replies.length ? replies[used++] : undefined);
  if (server.wire === 'gemini') {
    server.fake.reset();
    server.fake.scriptFn((request) => {
      if (!request.stream) {
        const name = /^Name: (.+)$/m.exec(String(request.body.contents?.[0]?.parts?.[0]?.text ?? ''))?.[1] ?? 'The brewery';
        return geminiReply.grounded(`${name} brews ales and runs a taproom.`, [`${name} taproom`], [{ uri: 'https://example.com/a' }]);
      }
      const r = next();
      if (!r) return undefined;
      if ('answer' in r) return geminiReply.text(JSON.stringify(r.answer));
      if ('calls' in r) return r.text ? geminiReply.callsWithText(r.text, ...r.calls) : geminiReply.calls(...r.calls);
      return geminiReply.text(r.text);
    });
  } else {
    const wire = server.wire;
    server.fake.reset();
    server.fake.scriptFn((request) => {
      if (!request.stream) return undefined;
      const r = next();
      if (!r) return undefined;
      if ('answer' in r)
        return wire === 'anthropic' ? wireReply.calls({ name: ANSWER_TOOL, args: r.answer }) : wireReply.text(JSON.stringify(r.answer));
      if ('calls' in r) return r.text ? wireReply.callsWithText(r.text, ...r.calls) : wireReply.calls(...r.calls);
      return wireReply.text(r.text);
    });
  }
  return { used: () => used };
}

/** The environment that points a Brigade at a scripted server. */
export function scriptedEnv(server: ScriptedServer, key: string): Record<string, string> {
  if (server.wire === 'gemini') return { GEMINI_API_KEY: key, GEMINI_BASE_URL: server.fake.baseUrl, GEMINI_MODEL: 'gemini-2.5-flash' };
  if (server.wire === 'openai') return { OPENAI_API_KEY: key, OPENAI_BASE_URL: server.fake.baseUrl, OPENAI_MODEL: 'gpt-4.1-mini' };
  return { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.fake.baseUrl, ANTHROPIC_MODEL: 'claude-haiku-4-5' };
}
