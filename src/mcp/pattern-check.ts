// The whole of a tool's JSON Schema, patterns included, checked where it is safe to: in the MCP activity,
// with RE2 (re2-wasm: linear time in the text, no backtracking, no native build) instead of JavaScript's
// RegExp. A string longer than PATTERN_TEXT_LIMIT is not matched at all: it is refused, so even a linear
// engine is never handed megabytes against a server's pattern. A pattern RE2 cannot run (lookaround,
// backreferences) is left to the server, which owns its input; it is never run by a backtracking engine.
// The same engine backs the MCP client's own checks (a tool's outputSchema against structuredContent).
import { Ajv, type ValidateFunction } from 'ajv';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { RE2 } from 're2-wasm';
import type { JsonObject } from '../shared/messages.ts';

/** the longest string a server's pattern is matched against */
export const PATTERN_TEXT_LIMIT = 32_768;
const SHOWN = 120;

interface Matcher {
  test(text: string): boolean;
  toString(): string;
}

function linearRegExp(source: string, flags: string): Matcher {
  let re: RE2 | undefined;
  try {
    // RE2 works in unicode mode only, which is ajv's default (unicodeRegExp) anyway.
    re = new RE2(source, flags.includes('u') ? flags : `${flags}u`);
  } catch {
    re = undefined;
  }
  return {
    test: (text: string) => (re ? text.length <= PATTERN_TEXT_LIMIT && re.test(text) : true),
    toString: () => `/${source}/${flags}`,
  };
}

function linearAjv(): Ajv {
  return new Ajv({
    allErrors: true,
    strict: false,
    validateSchema: false,
    validateFormats: false,
    logger: false,
    $data: false,
    code: { regExp: Object.assign(linearRegExp, { code: 'linearRegExp' }) as never },
  });
}

const ajv = linearAjv();
const compiled = new Map<string, ValidateFunction | string>();
const COMPILED_KEPT = 500;

function validatorFor(schema: JsonObject): ValidateFunction | string {
  const key = JSON.stringify(schema);
  let found = compiled.get(key);
  if (found === undefined) {
    const { $schema: _dialect, ...rest } = schema;
    try {
      found = ajv.compile(rest);
    } catch (error) {
      found = `the server's schema cannot be checked (${String(error instanceof Error ? error.message : error).slice(0, SHOWN)})`;
    }
    if (compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, found);
  }
  return found;
}

const valueAt = (root: unknown, pointer: string): unknown =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (value, part) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined),
      root,
    );

/**
 * Why the arguments do not fit the tool's whole schema (patterns too), in words for the model; undefined
 * when they fit.
 */
export function argumentsRefusal(inputSchema: JsonObject, args: JsonObject): string | undefined {
  const validate = validatorFor(inputSchema);
  if (typeof validate === 'string') return validate;
  if (validate(args)) return undefined;
  const problems = (validate.errors ?? []).slice(0, 5).map((error) => {
    const where = error.instancePath || '(the arguments)';
    const value = valueAt(args, error.instancePath);
    if (error.keyword === 'pattern' && typeof value === 'string' && value.length > PATTERN_TEXT_LIMIT) {
      return `${where} is ${value.length} characters long; a string checked against a pattern may have at most ${PATTERN_TEXT_LIMIT}`;
    }
    const message = (error.message ?? 'does not fit').slice(0, SHOWN);
    const extra = error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty).slice(0, SHOWN)})` : '';
    return `${where} ${message}${extra}`;
  });
  return problems.join('; ');
}

/** For the MCP client (its check of structuredContent against a tool's outputSchema): the same engine. */
export function linearSchemaValidator(): AjvJsonSchemaValidator {
  return new AjvJsonSchemaValidator(linearAjv());
}
