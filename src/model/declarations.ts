// A tool's zod schema is the one source of its declaration: the model sees the same rules the runtime checks.
import { z } from 'zod';
import type { JsonObject } from '../shared/messages.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { ToolDeclaration } from './types.ts';

const converted = new WeakMap<readonly ToolSpec[], readonly ToolDeclaration[]>();

/** Every model step of an agent asks for the same list, and z.toJSONSchema is not cheap: convert each list once. */
export function toolDeclarations(tools: readonly ToolSpec[]): readonly ToolDeclaration[] {
  let declarations = converted.get(tools);
  if (!declarations) {
    declarations = Object.freeze(
      tools.map((tool) => Object.freeze({ name: tool.name, description: tool.description, parameters: parametersOf(tool) })),
    );
    converted.set(tools, declarations);
  }
  return declarations;
}

function parametersOf(tool: ToolSpec): JsonObject {
  // 'input': the model writes arguments before any transform or default runs, so it must see the input shape.
  // Unrepresentable types throw here on purpose: a tool the model cannot be told about is a programming error.
  const schema = z.toJSONSchema(tool.args, { io: 'input' }) as JsonObject;
  // Gemini's parametersJsonSchema takes the schema itself; the dialect marker is noise it may refuse.
  const { $schema: _dialect, ...parameters } = schema;
  if (parameters.type !== 'object') {
    throw new Error(`Tool ${tool.name}: arguments must be an object schema, got ${JSON.stringify(parameters.type)}`);
  }
  return parameters;
}
