// The copy of a tool's JSON Schema that workflow code may run: nothing in it makes a regular expression run.
// A schema comes from an MCP server, and a `pattern` in it would run on JavaScript's backtracking RegExp in
// the workflow, where one catastrophic pattern (`^(a+)+$` against "aaaa…!") holds every workflow task past
// its timeout, for good. So the copy keeps only the keywords that check structure and bounds, each where a
// schema may stand; `pattern`, `patternProperties` and `format` go (the MCP activity checks them against the
// whole schema with a linear-time engine, src/mcp/pattern-check.ts), and so does every keyword ajv does not
// need (vendor keywords, examples, defaults), which a `$ref` could otherwise point into. Pure.
import type { JsonObject } from './messages.ts';

/** keywords whose value is one schema */
const ONE = new Set([
  'items',
  'additionalItems',
  'contains',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
/** keywords whose value is a list of schemas */
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** keywords whose value maps names to schemas */
const MAP = new Set(['properties', '$defs', 'definitions', 'dependentSchemas']);
/** keywords kept as they are: values, bounds and references, none of which runs a regular expression */
const PLAIN = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  '$ref',
  '$id',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  'nullable',
]);
const MAX_DEPTH = 64;

type Schema = JsonObject | boolean;
const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

export function schemaWithoutPatterns(schema: JsonObject): JsonObject {
  // With patternProperties anywhere, "unevaluated" can no longer be told apart from "matched a pattern".
  const hadPatternProperties = JSON.stringify(schema).includes('"patternProperties"');
  const copy = strip(schema, 0, hadPatternProperties);
  return isObject(copy) ? copy : {};
}

function strip(schema: unknown, depth: number, loosenUnevaluated: boolean): Schema {
  if (typeof schema === 'boolean') return schema;
  // Deeper than any real tool's arguments: checked by the activity only.
  if (!isObject(schema) || depth > MAX_DEPTH) return true;
  const sub = (value: unknown) => strip(value, depth + 1, loosenUnevaluated);
  // Names a pattern would have let through are not "additional" here: the activity decides about them.
  const patterned = isObject(schema.patternProperties) && Object.keys(schema.patternProperties).length > 0;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((key === 'additionalProperties' && patterned) || (key === 'unevaluatedProperties' && loosenUnevaluated)) continue;
    if (key === '$ref' && (typeof value !== 'string' || !value.startsWith('#'))) continue;
    if (PLAIN.has(key)) out[key] = value;
    else if (ONE.has(key)) out[key] = Array.isArray(value) ? value.map(sub) : sub(value);
    else if (LIST.has(key) && Array.isArray(value)) out[key] = value.map(sub);
    else if (MAP.has(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, entry]) => [name, sub(entry)]));
    else if (key === 'dependencies' && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, entry]) => [name, Array.isArray(entry) ? entry : sub(entry)]));
    }
  }
  return out;
}
