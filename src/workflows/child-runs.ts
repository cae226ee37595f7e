// Tools that are workflows of their own: started as a child with a readable ID, awaited, their failure handed
// to the model as the call's result. The conversation knows which children run now, and for which turn: only
// they may open items in it, and only while that turn runs.
import { executeChild, log, setCurrentDetails, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ChildToolInput, ChildToolOutput } from '../shared/child-tool.ts';
import { describeError } from '../shared/log-safe.ts';
import type { ChatSessionInput, JsonObject, ToolCall } from '../shared/messages.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import { userFacingReason } from './failure-text.ts';

export class ChildRuns {
  /** the children running now, each with the turn that started it */
  readonly #running = new Map<string, number>();
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

  /**
   * Whether `workflowId` runs for a turn that has ended: the turn was stopped and stopped waiting for it, so
   * nothing it asks may reach the person (a later turn's question would take the next message as its answer).
   */
  outlived(workflowId: string): boolean {
    const turn = this.#running.get(workflowId);
    return turn !== undefined && turn !== this.#turns();
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
    this.#running.set(workflowId, this.#turns());
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
