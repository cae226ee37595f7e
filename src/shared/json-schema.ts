// A JSON Schema from an MCP server (a tool's inputSchema, an elicitation's requestedSchema) as a zod schema
// backed by ajv, so the workflow's checks (a call's arguments, an edit, an answer) read like those of Brigade's
// own tools and fail with the same kind of message. Pure (ajv compiles to a function; no I/O), so the workflow
// and the API import it alike. What is checked here is the schema without its patterns and formats
// (schema-without-patterns.ts): no regular expression a server wrote ever runs in a workflow. The MCP
// activity checks the rest (src/mcp/pattern-check.ts).
import { Ajv } from 'ajv';
import { z } from 'zod';
import type { JsonObject } from './messages.ts';
import { schemaWithoutPatterns } from './schema-without-patterns.ts';

/**
 * ajv's RegExp factory, for any pattern that still reaches it (a `$ref` into an `enum` value shaped like a
 * schema): nothing is compiled, everything matches. Patterns are the activity's to check.
 */
const noRegExp = Object.assign((source: string) => ({ test: () => true, toString: () => `/${source}/ (checked by the MCP activity)` }), {
  code: 'noRegExp',
});

const ajv = new Ajv({
  allErrors: true,
  strict: false,
  validateFormats: false,
  logger: false,
  // $data would let a value in the arguments name a pattern (or a bound) to check against: off, as by default.
  $data: false,
  code: { regExp: noRegExp as never },
});
const compiled = new Map<string, z.ZodType>();

export function jsonSchemaArgs(jsonSchema: JsonObject): z.ZodType {
  const key = JSON.stringify(jsonSchema);
  let schema = compiled.get(key);
  if (!schema) {
    schema = build(jsonSchema);
    compiled.set(key, schema);
  }
  return schema;
}

function build(jsonSchema: JsonObject): z.ZodType {
  // The dialect marker ($schema) is not kept: it names meta-schemas ajv may not carry; the keywords are what matter here.
  const schema = schemaWithoutPatterns(jsonSchema);
  let validate: ReturnType<typeof ajv.compile> | undefined;
  try {
    validate = ajv.compile(schema);
  } catch {
    validate = undefined;
  }
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (!validate) {
      ctx.addIssue({ code: 'custom', message: 'the server gave a schema that cannot be checked' });
      return;
    }
    if (validate(value)) return;
    for (const error of validate.errors ?? []) {
      const path = error.instancePath
        .split('/')
        .slice(1)
        .map((part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
      const named = error.keyword === 'required' ? [String(error.params.missingProperty)] : [];
      const extra = error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
      ctx.addIssue({ code: 'custom', path: [...path, ...named], message: `${error.message ?? 'does not fit'}${extra}` });
    }
  });
}
