// Tools that are workflows of their own: started as a child with a readable ID, awaited, their failure handed
// to the model as the call's result. The conversation knows which children run now: only they may open items in it.
import { executeChild, log, setCurrentDetails, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ChildToolInput, ChildToolOutput } from '../shared/child-tool.ts';
import { describeError } from '../shared/log-safe.ts';
import type { ChatSessionInput, JsonObject, ToolCall } from '../shared/messages.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import { userFacingReason } from './failure-text.ts';

export class ChildRuns {
  readonly #running = new Set<string>();
  readonly #input: ChatSessionInput;
  readonly #turns: () => number;

  constructor(input: ChatSessionInput, turns: () => number) {
    this.#input = input;
    this.#turns = turns;
  }

  /** whether `workflowId` is a child this conversation runs now */
  has(workflowId: string): boolean {
    return this.#running.has(workflowId);
  }

  async run(spec: ToolSpec, call: ToolCall, args: JsonObject): Promise<ChildToolOutput> {
    const { conversationId, userId, client, settings } = this.#input;
    const runner = spec.runner as Extract<ToolSpec['runner'], { kind: 'child' }>;
    const id = uuid4();
    const workflowId = `${runner.idPrefix}-${id}`;
    const childInput: ChildToolInput = {
      id,
      conversationId,
      userId,
      ...(client ? { client } : {}),
      parentWorkflowId: workflowInfo().workflowId,
      callId: call.id,
      tool: call.name,
      args,
      settings,
    };
    this.#running.add(workflowId);
    setCurrentDetails(`Turn ${this.#turns()}: ${call.name} runs as child workflow ${workflowId}.`);
    try {
      return await executeChild<(input: ChildToolInput) => Promise<ChildToolOutput>>(runner.workflow, {
        workflowId,
        args: [childInput],
        staticSummary: `${call.name} for conversation ${conversationId}`,
      });
    } catch (error) {
      log.error('Child tool failed', { workflowId, reason: describeError(error) });
      return { result: { error: `The tool failed (${userFacingReason(error)}).` } };
    } finally {
      this.#running.delete(workflowId);
    }
  }
}
