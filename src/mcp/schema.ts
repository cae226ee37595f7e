// An MCP tool's inputSchema (JSON Schema, any dialect a server writes) as Gemini's parametersJsonSchema takes
// it: the keywords Gemini documents are kept, `const` becomes a one-value `enum`, a list of types becomes
// `anyOf`, and the rest (`$schema`, `default`, `examples`, string patterns, vendor keywords) is dropped. The
// model may then see looser rules than the server's: the runtime still checks each call against the whole
// original schema (ajv, in the workflow), and a call that does not fit goes back to the model with why.
import type { JsonObject } from '../shared/messages.ts';

const KEEP = new Set([
  'type',
  'format',
  'title',
  'description',
  'enum',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'allOf',
  'properties',
  'additionalProperties',
  'required',
  '$ref',
  '$defs',
  '$id',
  '$anchor',
  'propertyOrdering',
  'nullable',
]);
const SCHEMA_MAPS = new Set(['properties', '$defs']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

export function toGeminiSchema(inputSchema: unknown): JsonObject {
  const converted = convert(isObject(inputSchema) ? inputSchema : {}, 0);
  // A tool's arguments are an object, whatever the server wrote (MCP requires `type: "object"`).
  return { ...converted, type: 'object', properties: isObject(converted.properties) ? converted.properties : {} };
}

function convert(schema: JsonObject, depth: number): JsonObject {
  if (depth > 32) return {};
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'const') {
      out.enum = [value];
    } else if (!KEEP.has(key)) {
      continue;
    } else if (SCHEMA_MAPS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, isObject(sub) ? convert(sub, depth + 1) : {}]));
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key === 'oneOf' ? 'anyOf' : key] = value.map((sub) => (isObject(sub) ? convert(sub, depth + 1) : {}));
    } else if ((key === 'items' || key === 'additionalProperties') && isObject(value)) {
      out[key] = convert(value, depth + 1);
    } else if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((type) => typeof type === 'string');
      if (types.length === 1) out.type = types[0];
      else out.anyOf = types.map((type) => ({ type }));
    } else if (key === 'enum' && Array.isArray(value)) {
      // Gemini takes enums of strings (and numbers); anything else is left to the runtime's check.
      if (value.every((entry) => typeof entry === 'string' || typeof entry === 'number')) out.enum = value;
    } else {
      out[key] = value;
    }
  }
  return out;
}
