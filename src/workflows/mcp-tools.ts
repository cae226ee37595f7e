// An agent's MCP tools inside chatSession: listed by an activity (so the list is in history and a replay never
// asks a server), listed again when a call reports that the server's list changed, and turned into ToolSpecs
// the turn loop handles like the agent's own: the same approvals, deadlines and timeout actions. Arguments
// (the model's and an edit's) are checked against the server's own JSON Schema with ajv.
import { Ajv } from 'ajv';
import { z } from 'zod';
import type { McpCallInput, McpCallResult, McpListToolsInput, McpServerTools, McpToolDescriptor } from '../mcp/types.ts';
import type { JsonObject, ToolCall } from '../shared/messages.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { ToolDeclaration } from '../model/types.ts';

export interface McpToolsPorts {
  list(input: Pick<McpListToolsInput, 'servers' | 'known'>): Promise<McpServerTools[]>;
  call(input: Pick<McpCallInput, 'callId' | 'name' | 'server' | 'tool' | 'args' | 'listHash'>, tool: McpToolDescriptor): Promise<McpCallResult>;
}

export type McpToolSpec = ToolSpec & { mcp: McpToolDescriptor };

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, logger: false });

/** The server's schema as a zod schema, so every check (the call's, an edit's) reads like the agent's own tools'. */
export function argsSchema(inputSchema: JsonObject): z.ZodType {
  const { $schema: _dialect, ...schema } = inputSchema;
  let validate: ReturnType<typeof ajv.compile> | undefined;
  try {
    validate = ajv.compile(schema);
  } catch {
    validate = undefined;
  }
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (!validate) {
      ctx.addIssue({ code: 'custom', message: 'the server gave this tool a schema that cannot be checked' });
      return;
    }
    if (validate(value)) return;
    for (const error of validate.errors ?? []) {
      const path = error.instancePath.split('/').slice(1).map((part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
      const missing = error.keyword === 'required' ? ` (${String(error.params.missingProperty)})` : '';
      const extra = error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
      ctx.addIssue({ code: 'custom', path, message: `${error.message ?? 'does not fit'}${missing}${extra}` });
    }
  });
}

export function toSpec(tool: McpToolDescriptor): McpToolSpec {
  return {
    name: tool.name,
    description: tool.description,
    args: argsSchema(tool.inputSchema),
    policy: tool.policy,
    details: { server: tool.server, tool: tool.tool },
    mcp: tool,
  };
}

export class McpTools {
  readonly servers: readonly string[];
  readonly #ports: McpToolsPorts;
  #lists = new Map<string, McpServerTools>();
  #specs = new Map<string, McpToolSpec>();
  #declarations: ToolDeclaration[] = [];
  #fresh = false;

  constructor(servers: readonly string[] | undefined, ports: McpToolsPorts) {
    this.servers = servers ?? [];
    this.#ports = ports;
  }

  /** whether the conversation has MCP servers at all: without, nothing here asks Temporal for anything */
  get enabled(): boolean {
    return this.servers.length > 0;
  }

  /** Lists the tools when the conversation has no list yet, or a call said a server's list changed. */
  async ready(): Promise<void> {
    if (!this.enabled || this.#fresh) return;
    const known = Object.fromEntries([...this.#lists].filter(([, list]) => list.hash).map(([server, list]) => [server, list.hash]));
    const lists = await this.#ports.list({ servers: [...this.servers], known });
    for (const list of lists) {
      if (!list.unchanged) this.#lists.set(list.server, list);
    }
    this.#specs = new Map();
    for (const list of this.#lists.values()) {
      for (const tool of list.tools) this.#specs.set(tool.name, toSpec(tool));
    }
    this.#declarations = [...this.#specs.values()].map((spec) => ({ name: spec.name, description: spec.description, parameters: spec.mcp.parameters }));
    // A server that could not be reached is asked again before the next model step.
    this.#fresh = lists.every((list) => !list.error);
  }

  find(name: string): McpToolSpec | undefined {
    return this.#specs.get(name);
  }

  /** what the model step is told besides the agent's own tools */
  declarations(): ToolDeclaration[] {
    return this.#declarations;
  }

  async call(call: ToolCall, args: JsonObject): Promise<unknown> {
    const spec = this.#specs.get(call.name)!;
    const { server, tool } = spec.mcp;
    const hash = this.#lists.get(server)?.hash;
    const { result, toolsChanged } = await this.#ports.call(
      { callId: call.id, name: call.name, server, tool, args, ...(hash ? { listHash: hash } : {}) },
      spec.mcp,
    );
    if (toolsChanged) this.#fresh = false;
    return result;
  }
}
