// An MCP question's form, as data: what control each property of the spec's restricted schema gets (text with
// its format, a number with its bounds, a checkbox, a choice, several choices), the values it starts with (the
// schema's defaults) and the answer it sends, each value with its JSON type (numbers as numbers, booleans as
// booleans, several choices as an array). The server side fills defaults again for anything left out.
import type { JsonSchema } from './types';

export type FieldValue = string | boolean | string[];
export interface Choice {
  value: string;
  label: string;
}
export type Control =
  | { kind: 'text'; inputType: 'text' | 'email' | 'url' | 'date' | 'datetime-local' }
  | { kind: 'number'; integer: boolean }
  | { kind: 'checkbox' }
  | { kind: 'choice'; choices: Choice[] }
  | { kind: 'choices'; choices: Choice[] };

const INPUT_TYPES: Record<string, 'email' | 'url' | 'date' | 'datetime-local'> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

const typeOf = (prop: JsonSchema) => (Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type);

/** The choices of an enum: `enum` (with `enumNames` as labels), or `oneOf` / `anyOf` of `const` with `title`. */
function choicesOf(prop: JsonSchema | undefined): Choice[] | undefined {
  if (!prop) return undefined;
  if (Array.isArray(prop.enum)) {
    return prop.enum.map((value, i) => ({ value: String(value), label: prop.enumNames?.[i] ?? String(value) }));
  }
  const titled = prop.oneOf ?? prop.anyOf;
  if (titled?.length && titled.every((option) => option.const !== undefined)) {
    return titled.map((option) => ({ value: String(option.const), label: option.title ?? String(option.const) }));
  }
  return undefined;
}

export function controlOf(prop: JsonSchema): Control {
  const type = typeOf(prop);
  if (type === 'array') {
    const choices = choicesOf(prop.items);
    if (choices) return { kind: 'choices', choices };
  }
  const choices = choicesOf(prop);
  if (choices) return { kind: 'choice', choices };
  if (type === 'boolean') return { kind: 'checkbox' };
  if (type === 'number' || type === 'integer') return { kind: 'number', integer: type === 'integer' };
  return { kind: 'text', inputType: (prop.format && INPUT_TYPES[prop.format]) || 'text' };
}

/** What a field shows before the person touches it: the schema's default, in the control's terms. */
function initialValue(prop: JsonSchema, control: Control): FieldValue {
  const value = prop.default;
  if (control.kind === 'checkbox') return value === true;
  if (control.kind === 'choices') return Array.isArray(value) ? value.map(String) : [];
  if (value === undefined || value === null) return '';
  if (control.kind === 'text' && control.inputType === 'datetime-local') return localDateTime(String(value));
  return String(value);
}

export function initialValues(properties: Record<string, JsonSchema>): Record<string, FieldValue> {
  return Object.fromEntries(Object.entries(properties).map(([name, prop]) => [name, initialValue(prop, controlOf(prop))]));
}

/**
 * The answer the form sends: an empty text or number is left out (the server fills its default, if any); a
 * checkbox is always an answer; several choices are an array, left out only when none is ticked and the
 * schema gave no default (so clearing a default's choices answers `[]`).
 */
export function answerOf(properties: Record<string, JsonSchema>, values: Record<string, FieldValue>): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(properties)) {
    const control = controlOf(prop);
    const value = values[name];
    if (control.kind === 'checkbox') answer[name] = value === true;
    else if (control.kind === 'choices') {
      const picked = Array.isArray(value) ? value : [];
      if (picked.length > 0 || prop.default !== undefined) answer[name] = picked;
    } else if (typeof value === 'string' && value !== '') {
      if (control.kind === 'number') answer[name] = Number(value);
      else if (control.kind === 'text' && control.inputType === 'datetime-local') answer[name] = isoDateTime(value);
      else answer[name] = value;
    }
  }
  return answer;
}

/** RFC 3339 (what the schema's date-time means) to a datetime-local input's value, in the person's time zone. */
function localDateTime(value: string): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** A datetime-local value (the person's time zone, no offset) as RFC 3339 in UTC; left as typed if unreadable. */
function isoDateTime(value: string): string {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString().replace(/\.000Z$/, 'Z');
}
