// An agent's MCP tools inside chatSession: listed by an activity (so the list is in history and a replay never
// asks a server), listed again when a call reports that the server's list changed, and turned into ToolSpecs
// the turn loop handles like the agent's own: the same approvals, deadlines and timeout actions. Arguments
// (the model's and an edit's) are checked against the server's own JSON Schema with ajv.
import { jsonSchemaArgs } from '../shared/json-schema.ts';
import type {
  McpCallInput,
  McpCallResult,
  McpListToolsInput,
  McpQuestionAnswer,
  McpQuestionRequest,
  McpServerTools,
  McpToolDescriptor,
} from '../mcp/types.ts';
import { QUESTION_DECISIONS, questionAnswer } from '../shared/mcp-question-kind.ts';
import type { DecisionName, JsonObject, PendingItem, ToolCall } from '../shared/messages.ts';
import type { ItemOutcome } from './pending-items.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import type { ToolDeclaration } from '../model/types.ts';

export interface McpToolsPorts {
  list(input: Pick<McpListToolsInput, 'servers' | 'known'>): Promise<McpServerTools[]>;
  call(
    input: Pick<McpCallInput, 'callId' | 'name' | 'server' | 'tool' | 'args' | 'listHash'>,
    tool: McpToolDescriptor,
  ): Promise<McpCallResult>;
}

export type McpToolSpec = ToolSpec & { mcp: McpToolDescriptor };

/** What questions (elicitations) need of the conversation: asking through the turn loop, and closing one nobody answered. */
export interface McpQuestionPorts {
  park(item: PendingItem, deadlineMs: number, onTimeout: DecisionName): Promise<ItemOutcome>;
  /** a question still unanswered whose call gave up is cancelled: a decision, as the turn machine hears one */
  cancel(id: string, reason: string): void;
  now(): number;
}

export function toSpec(tool: McpToolDescriptor): McpToolSpec {
  return {
    name: tool.name,
    description: tool.description,
    args: jsonSchemaArgs(tool.inputSchema),
    policy: tool.policy,
    // What an approval card shows: the server, its own name for the tool, and the form's schema.
    details: { server: tool.server, tool: tool.tool, schema: tool.parameters },
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
  /** calls running now, by call id: the only ones a question may belong to */
  readonly #inFlight = new Map<string, { name: string; args: JsonObject; questions: string[] }>();
  /** answers the call activities poll for, by request id; dropped when their call ends */
  readonly #answers = new Map<string, McpQuestionAnswer>();
  #questions: McpQuestionPorts | undefined;

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
    this.#declarations = [...this.#specs.values()].map((spec) => ({
      name: spec.name,
      description: spec.description,
      parameters: spec.mcp.parameters,
    }));
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
    const running = { name: call.name, args, questions: [] as string[] };
    this.#inFlight.set(call.id, running);
    try {
      const { result, toolsChanged } = await this.#ports.call(
        { callId: call.id, name: call.name, server, tool, args, ...(hash ? { listHash: hash } : {}) },
        spec.mcp,
      );
      if (toolsChanged) this.#fresh = false;
      return result;
    } finally {
      this.#inFlight.delete(call.id);
      for (const id of running.questions) {
        this.#answers.delete(id);
        // A question still open when its call ended (the server gave up, the attempt died) is closed with it.
        this.#questions?.cancel(id, 'the call ended');
      }
    }
  }

  attachQuestions(ports: McpQuestionPorts): void {
    this.#questions = ports;
  }

  /**
   * A call's activity asks the user something (mcpQuestion signal): a pending `question`, answered through
   * the same decisions as any item. Returns why it was refused, or undefined when it was opened.
   */
  ask(request: McpQuestionRequest): string | undefined {
    const running = this.#inFlight.get(request.callId);
    if (!running || !this.#questions) return 'mcpQuestion for a call that is not running';
    if (running.questions.includes(request.requestId)) return undefined;
    // A retried attempt asks again: what the dead attempt asked is closed, its answer could reach no one.
    for (const id of running.questions) this.#questions.cancel(id, 'asked again');
    running.questions.push(request.requestId);
    const item: PendingItem = {
      id: request.requestId,
      kind: 'question',
      tool: running.name,
      callId: request.callId,
      args: running.args,
      decisions: [...QUESTION_DECISIONS],
      expiresAt: new Date(this.#questions.now() + request.deadlineMs).toISOString(),
      prompt: request.message,
      details: { server: request.server, schema: request.schema },
    };
    void this.#questions.park(item, request.deadlineMs, 'cancel').then(({ decision }) => {
      if (!this.#inFlight.has(request.callId)) return;
      const action = decision.decision === 'accept' ? 'accept' : decision.decision === 'decline' ? 'decline' : 'cancel';
      // An accepted answer goes to the server as it was checked: with the schema's defaults filled in.
      this.#answers.set(request.requestId, action === 'accept' ? { action, content: questionAnswer(item, decision) } : { action });
    });
    return undefined;
  }

  /** what the user answered, once they have */
  answer(requestId: string): McpQuestionAnswer | null {
    return this.#answers.get(requestId) ?? null;
  }
}
