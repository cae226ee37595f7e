// What an accepted MCP question (elicitation) sends to its server: the person's answer, with the requested
// schema's defaults filled in for every property the answer leaves out (SEP-1034: Brigade declares
// `elicitation.form.applyDefaults`). The one place defaults are applied: the workflow checks the filled answer
// (so `{}` for fields that all have defaults is an answer) and records it as what the activity sends.
// The spec's requested schema is flat (top-level properties of primitive types, enums and arrays of enums),
// so only top-level properties are filled. The formats the spec allows (email, uri, date, date-time) are
// checked here with fixed, linear tests: the shared JSON Schema check leaves formats aside (json-schema.ts).
import type { JsonObject } from './messages.ts';
import type { FieldIssue } from './refusal.ts';

export function answerWithDefaults(schema: JsonObject, answer: JsonObject): JsonObject {
  const properties = propertiesOf(schema);
  const filled: JsonObject = { ...answer };
  for (const [name, property] of Object.entries(properties)) {
    if (filled[name] === undefined && Object.prototype.hasOwnProperty.call(property, 'default')) {
      filled[name] = property.default;
    }
  }
  return filled;
}

/** The answer's strings that do not have the format their property names, one issue each. */
export function formatIssues(schema: JsonObject, answer: JsonObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const [name, property] of Object.entries(propertiesOf(schema))) {
    const value = answer[name];
    const format = typeof property.format === 'string' ? property.format : undefined;
    if (typeof value !== 'string' || !format || !(format in FORMATS)) continue;
    if (!FORMATS[format as keyof typeof FORMATS](value)) issues.push({ field: name, message: `must be ${FORMAT_WORDS[format]}` });
  }
  return issues;
}

function propertiesOf(schema: JsonObject): Record<string, JsonObject> {
  const properties = schema.properties;
  if (!properties || typeof properties !== 'object' || Array.isArray(properties)) return {};
  return Object.fromEntries(
    Object.entries(properties).filter(
      (entry): entry is [string, JsonObject] => !!entry[1] && typeof entry[1] === 'object' && !Array.isArray(entry[1]),
    ),
  );
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

const FORMATS = {
  email(text: string) {
    const at = text.indexOf('@');
    if (at < 1 || at !== text.lastIndexOf('@') || /\s/.test(text)) return false;
    const domain = text.slice(at + 1);
    return domain.length > 2 && domain.includes('.') && !domain.startsWith('.') && !domain.endsWith('.');
  },
  uri: (text: string) => /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/.test(text),
  date: isDate,
  'date-time'(text: string) {
    const match = DATE_TIME.exec(text);
    return !!match && isDate(match[1]!) && Number(match[2]) < 24 && Number(match[3]) < 60 && Number(match[4]) < 61;
  },
};

const FORMAT_WORDS: Record<string, string> = {
  email: 'an email address',
  uri: 'a URI (with its scheme, such as https:)',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date and time (RFC 3339, such as 2025-06-01T09:30:00Z)',
};
