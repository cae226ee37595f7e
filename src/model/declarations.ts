// A tool's zod schema is the one source of its declaration: the model sees the same rules the runtime checks.
import { z } from 'zod';
import type { JsonObject } from '../shared/messages.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { ToolDeclaration } from './types.ts';

export function toolDeclarations(tools: ToolSpec[]): ToolDeclaration[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: parametersOf(tool),
  }));
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
