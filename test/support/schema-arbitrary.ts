// fast-check arbitraries generated from the API's own zod schemas (through their JSON Schema, the same one
// /openapi.json publishes), mixed at every level with hostile values: NUL, lone surrogates, RTL marks,
// 100 KB strings, deep nesting, `__proto__`.
import fc from 'fast-check';
import { z } from 'zod';

const LONG = 'x'.repeat(100_000);

export const HOSTILE_STRINGS: string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud83d',
  'tail \udc00',
  '\udc00\ud83d',
  '😀',
  '\u202eevil\u202c',
  '\u200f\u200e',
  '\ufeff',
  '\r\n\t',
  LONG,
  `${LONG}\u0000`,
  '__proto__',
  'constructor',
  'prototype',
  '%ZZ',
  '%00',
  '../../etc/passwd',
  "'; DROP TABLE conversations; --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '9223372036854775808',
  '-1',
  'NaN',
  'null',
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
);

/** Objects whose keys JSON.parse would make own properties, which a careless merge turns into a prototype. */
const pollutingObjects = [
  JSON.parse('{"__proto__":{"polluted":true}}') as unknown,
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}') as unknown,
];

const nested = (depth: number, leaf: unknown): unknown => {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = level % 2 ? { n: value } : [value];
  return value;
};

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, 0, -1, 1e308, 2 ** 63, [], {}) },
  { weight: 1, arbitrary: fc.constantFrom(...pollutingObjects) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 1_000 }).map((depth) => nested(depth, '\u0000')) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

type JsonSchema = Record<string, any>;

/** Values that fit `schema` most of the time, with hostile values (and keys) mixed in at every level. */
export function arbitraryFor(schema: z.ZodType): fc.Arbitrary<unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return fromJsonSchema(json);
}

function fromJsonSchema(schema: JsonSchema): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 7, arbitrary: conforming(schema) }, { weight: 1, arbitrary: hostileValue });
}

function conforming(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map(fromJsonSchema));
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'uuid') return fc.uuid();
      if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
      // Long strings come from the hostile values; generated ones stay short so a run stays fast.
      const minLength = Math.min(schema.minLength ?? 0, 40);
      return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 40, 40)) });
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? fromJsonSchema(schema.items) : hostileValue, { maxLength: 4 });
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const model = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, fromJsonSchema(value)]));
      const known = fc.record(model, { requiredKeys: (schema.required ?? []).filter((key: string) => key in properties) });
      const extraValue =
        schema.additionalProperties && typeof schema.additionalProperties === 'object'
          ? fromJsonSchema(schema.additionalProperties)
          : hostileValue;
      const extra = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), hostileString), extraValue, { maxKeys: 3 });
      return fc
        .tuple(known, fc.option(extra, { freq: 3 }), fc.option(fc.constantFrom(...pollutingObjects), { freq: 8 }))
        .map(([fields, more, polluting]) => ({ ...(polluting as object), ...more, ...fields }));
    }
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

/** Whole bodies no schema describes: not JSON, not an object, too deep, too big, not UTF-8. */
export const hostileRawBody: fc.Arbitrary<string | Buffer> = fc.constantFrom<string | Buffer>(
  'null',
  '[]',
  '"text"',
  '42',
  '{"text":',
  '{"text":"\\u0000"}',
  '{"text":"\\ud800"}',
  '{"title":"\\u0000","agent":"support"}',
  '{"__proto__":{"polluted":true},"text":"hi"}',
  `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
  `{"text":"${'a'.repeat(100_000)}"}`,
  `{"agent":"support","title":"${'t'.repeat(300 * 1024)}"}`,
  Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x80, 0x22, 0x7d]),
);

/** A path segment as a client could send it: the UTF-8 bytes percent-encoded, or malformed on purpose. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: hostileString.map((text) => percentEncode(text.slice(0, 2_000))) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '%ZZ',
      '%',
      '%E0%A4%A',
      '%00',
      '..',
      '%2e%2e',
      '%2F',
      '%C0%AF',
      '%ED%A0%BD',
      '00000000-0000-4000-8000-000000000000',
    ),
  },
);

export function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/** Header values Node will send (latin-1 without control characters), plain or hostile. */
export const headerValue: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', ' ', 'x'.repeat(300), 'k1', '../', '%ZZ', '\u00e9t\u00e9', 'a b c', '9223372036854775808', '-1', '1e3'),
  )
  .filter((value) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value));
