// Model output that must fit a zod schema: parsed, validated, asked again a bounded number of times with
// what was wrong, then reported as ModelOutputInvalid (a failure whose message may be shown to people).
import { z } from 'zod';
import type { JsonObject } from '../shared/messages.ts';

export class ModelOutputInvalid extends Error {
  override name = 'ModelOutputInvalid';
}

/** The JSON Schema a response schema is made from: the input shape, without the dialect marker Gemini refuses. */
export function responseSchema(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  return rest;
}

/** Reads a JSON answer (tolerating a ```json fence) and checks it; a problem is a sentence the model can act on. */
export function readStructured<S extends z.ZodType>(
  text: string,
  schema: S,
): { ok: true; value: z.infer<S> } | { ok: false; problem: string } {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return { ok: false, problem: 'the answer was not JSON' };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(answer)'}: ${issue.message}`);
  return { ok: false, problem: `the answer did not fit its schema (${issues.join('; ')})` };
}

/**
 * Calls `ask` until its text fits `schema`, at most `attempts` times; each retry is told what was wrong.
 * A transport failure is not caught here: Temporal retries those.
 */
export async function askStructured<S extends z.ZodType>(
  schema: S,
  attempts: number,
  ask: (correction: string | undefined) => Promise<string>,
  what = 'The model',
): Promise<z.infer<S>> {
  let correction: string | undefined;
  let problem = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const read = readStructured(await ask(correction), schema);
    if (read.ok) return read.value;
    problem = read.problem;
    correction = `Your previous answer was refused: ${problem}. Answer again with JSON that fits the schema exactly.`;
  }
  throw new ModelOutputInvalid(`${what} gave no valid answer in ${attempts} attempt(s): ${problem}.`);
}
