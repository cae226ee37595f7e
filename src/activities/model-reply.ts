// Asking the model within a step: a stateful agent's structured answer (checked against its schema and asked
// again, not streamed: its raw text is no reply to show), or a reply streamed as deltas with tool declarations.
// And what a reply becomes: the assistant message the workflow, the tools and the transcript all hold.
import { ApplicationFailure } from '@temporalio/activity';
import { toolDeclarations } from '../model/declarations.ts';
import { askStructured, responseSchema } from '../model/structured.ts';
import type { ChatModel, ModelReply, ToolDeclaration } from '../model/types.ts';
import type { AgentKernel } from '../shared/agent-kernel.ts';
import type { AgentName, ChatMessage } from '../shared/messages.ts';
import { MODEL_CALLS_MAX_BYTES, MODEL_CALLS_MAX_DEPTH, jsonBytes, nestsDeeper } from '../shared/payload-bounds.ts';
import { storableJson, storableText } from '../shared/safe-text.ts';
import type { ToolSpec } from '../shared/tool-spec.ts';
import { addUsage } from '../shared/usage-sum.ts';
import type { DeltaWriter } from './delta-writer.ts';
import type { ModelStepInput } from './runtime-types.ts';

export interface Asked {
  reply: ModelReply;
  /** a stateful agent's answer, checked against its schema */
  structured?: unknown;
}

interface AskInput {
  model: ChatModel;
  agent: AgentName;
  stepId: string;
  system: string;
  transcript: ChatMessage[];
  /** aborts when Stop reaches the step */
  signal: AbortSignal;
  /** a regenerate's seed (ModelRequest.seed) */
  seed?: string;
}

/** A structured answer, asked again with what was wrong until it fits or the attempts are spent. */
export async function askKernel(
  kernel: AgentKernel,
  { model, agent, stepId, system, transcript, signal, seed }: AskInput,
  stepContext: ModelStepInput['context'],
  attempts: number,
  seen: { usage?: ModelReply['usage'] } = {},
): Promise<Asked> {
  const output = { name: agent, schema: responseSchema(kernel.output.schema) };
  let spent = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  let reply: ModelReply | undefined;
  const structured = await askStructured(
    kernel.output.schema,
    attempts,
    async (correction) => {
      reply = await model.generate({
        system,
        messages: correction ? [...transcript, { id: `${stepId}.correction`, role: 'user', text: correction }] : transcript,
        tools: [],
        ...(stepContext ? { context: stepContext } : {}),
        output,
        signal,
        ...(seed ? { seed } : {}),
      });
      spent = addUsage(spent, reply.usage);
      // every answer was paid for, one that fails its schema too: a failed step settles at `seen`
      seen.usage = { ...spent };
      return reply.text;
    },
    `The ${agent} model`,
  );
  return { reply: { ...reply!, text: kernel.output.text(structured), usage: spent }, structured };
}

/** A reply streamed as deltas; `seen` keeps what the stream reported so far (a stopped reply's tokens were paid for). */
export async function streamReply(
  tools: readonly ToolSpec[],
  { model, system, transcript, signal, seed }: AskInput,
  extraTools: readonly ToolDeclaration[] | undefined,
  deltas: DeltaWriter,
  seen: { usage?: ModelReply['usage'] },
): Promise<Asked> {
  const reply = await model.generate({
    system,
    messages: transcript,
    tools: extraTools?.length ? [...toolDeclarations(tools), ...extraTools] : toolDeclarations(tools),
    onText: (delta) => deltas.push(delta),
    onUsage: (used) => (seen.usage = used),
    signal,
    ...(seed ? { seed } : {}),
  });
  return { reply };
}

/**
 * What the workflow acts on crosses Temporal whole (its calls' arguments, a structured answer), and the
 * workflow writes them again (tool messages, pending items): a reply past the bound is a failed call, not a
 * workflow whose next command is too large to schedule. Gemini's own output limit keeps real replies far below.
 */
export function oversized({ reply, structured }: Asked): ApplicationFailure | undefined {
  // measured first: a reply nested thousands deep cannot even be sized as JSON
  if (nestsDeeper(reply.toolCalls, MODEL_CALLS_MAX_DEPTH + 2) || nestsDeeper(structured, MODEL_CALLS_MAX_DEPTH)) {
    return ApplicationFailure.create({
      type: 'ModelOutputInvalid',
      message: `the model's reply was nested too deep (its tool calls' arguments or structured answer go past ${MODEL_CALLS_MAX_DEPTH} levels), so it was not used`,
      nonRetryable: true,
    });
  }
  const acted = jsonBytes(reply.toolCalls) + (structured === undefined ? 0 : jsonBytes(structured));
  if (acted <= MODEL_CALLS_MAX_BYTES) return undefined;
  return ApplicationFailure.create({
    type: 'ModelOutputInvalid',
    message: `the model's reply was too large (its tool calls and structured answer were ${acted} bytes; at most ${MODEL_CALLS_MAX_BYTES} are accepted)`,
    nonRetryable: true,
  });
}

/**
 * The reply as the step's assistant message. The model's text and arguments are made storable before anyone
 * sees them, so the workflow, the tools and the transcript all hold the same value and no reply can fail a write.
 */
export function replyMessage(stepId: string, { reply, structured }: Asked): ChatMessage {
  const message: ChatMessage = { id: stepId, role: 'assistant', text: storableText(reply.text) };
  if (structured !== undefined) message.structured = storableJson(structured);
  if (reply.toolCalls.length) {
    message.toolCalls = reply.toolCalls.map((call, index) => ({
      id: `${stepId}.${index + 1}`,
      name: storableText(call.name),
      args: storableJson(call.args),
    }));
  }
  return message;
}
