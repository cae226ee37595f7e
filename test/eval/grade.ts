// The grader: scores a case from what happened in each turn (the tool calls the model made and their
// arguments, the results, the items left waiting, the reply's text), never from how the model was asked.
import type { ArgMatch, CallMatch, Expect, StepTrace } from './types.ts';

function matches(expected: ArgMatch, actual: unknown): boolean {
  if (expected instanceof RegExp) return (typeof actual === 'string' || typeof actual === 'number') && expected.test(String(actual));
  if (typeof expected === 'string' || typeof expected === 'number')
    return actual !== undefined && actual !== null && String(actual) === String(expected);
  return actual === expected;
}

function callMatches(want: CallMatch, call: { name: string; args: Record<string, unknown> }): boolean {
  return call.name === want.name && Object.entries(want.args ?? {}).every(([key, value]) => matches(value, call.args[key]));
}

const an = (word: string) => (/^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`);
const show = (want: CallMatch) =>
  `${want.name}(${Object.entries(want.args ?? {})
    .map(([k, v]) => `${k}=${v instanceof RegExp ? v : JSON.stringify(v)}`)
    .join(', ')})`;

// What the turn loop (src/workflows/turn-loop.ts) says when a turn ended without the model's answer: such a
// turn fails its case whatever else it expected (a failed turn leaves nothing waiting and calls no tool).
const RUNTIME_GAVE_UP =
  /^(The model could not answer \(|The turn failed \(|I stopped after \d+ steps|I stopped: the model made \d+ invalid tool calls)/m;

/** The problems of one turn against its expectation: empty when it did what it must. */
export function gradeStep(expect: Expect, trace: StepTrace): string[] {
  const problems: string[] = [];
  const turn = `turn ${trace.step + 1}`;
  if (trace.status !== 200) problems.push(`${turn}: the API answered ${trace.status}`);
  const gaveUp = RUNTIME_GAVE_UP.exec(trace.text);
  if (gaveUp) problems.push(`${turn}: the turn ended without an answer: "${trace.text.slice(gaveUp.index, gaveUp.index + 160)}"`);
  for (const want of expect.calls ?? []) {
    if (trace.calls.some((call) => callMatches(want, call))) continue;
    const same = trace.calls.filter((call) => call.name === want.name);
    problems.push(
      same.length
        ? `${turn}: ${want.name} called with the wrong arguments ${JSON.stringify(same[0]!.args)}, wanted ${show(want)}`
        : `${turn}: expected a call to ${show(want)}, got ${trace.calls.map((c) => c.name).join(', ') || 'no tool call'}`,
    );
  }
  for (const banned of expect.forbid ?? []) {
    const hit = trace.calls.find((call) => callMatches(banned, call));
    if (hit) problems.push(`${turn}: called ${hit.name} ${JSON.stringify(hit.args)}, which it must not (${show(banned)})`);
  }
  if (expect.noTools && trace.calls.length)
    problems.push(`${turn}: expected no tool call, got ${trace.calls.map((c) => c.name).join(', ')}`);
  if (expect.pending === 'none' && trace.pending.length)
    problems.push(`${turn}: expected nothing left waiting, got ${an(trace.pending[0]!.kind)} for ${trace.pending[0]!.tool}`);
  else if (expect.pending && expect.pending !== 'none') {
    const want = expect.pending;
    if (!trace.pending.some((item) => item.kind === want.kind && (!want.tool || item.tool === want.tool))) {
      problems.push(
        `${turn}: expected ${an(want.kind)}${want.tool ? ` for ${want.tool}` : ''} left waiting, got ${trace.pending.map((p) => `${p.kind} for ${p.tool}`).join(', ') || 'none'}`,
      );
    }
  }
  if (expect.result) {
    const { tool, match } = expect.result;
    const found = trace.results.filter((r) => r.tool === tool);
    const ok = found.some(
      (r) =>
        r.result &&
        typeof r.result === 'object' &&
        Object.entries(match).every(([k, v]) => matches(v, (r.result as Record<string, unknown>)[k])),
    );
    if (!ok)
      problems.push(
        `${turn}: no ${tool} result with ${JSON.stringify(match, (_k, v) => (v instanceof RegExp ? String(v) : v))}${found.length ? `; got ${JSON.stringify(found[0]!.result).slice(0, 160)}` : ''}`,
      );
  }
  for (const pattern of expect.says ?? [])
    if (!pattern.test(trace.text)) problems.push(`${turn}: the reply does not say ${pattern}: "${trace.text.slice(0, 120)}"`);
  for (const pattern of expect.mustNotSay ?? [])
    if (pattern.test(trace.text)) problems.push(`${turn}: the reply says ${pattern}, which it must not: "${trace.text.slice(0, 120)}"`);
  return problems;
}
