import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { STEP_STOPPED, type StoppedStep, budgetLimits } from '../shared/turn-control.ts';
import { type MeterConfig, budgetSettings, createUsageMeter } from './usage-meter.ts';
import type { LedgerCall } from '../db/usage-ledger.ts';
import { asModelFailure } from './model-failure.ts';
import type pg from 'pg';
import { type WriteOptions, writeBatch, writeBatchReadTranscript } from '../db/batch.ts';
import { StepCommits } from '../db/commit-durability.ts';
import { asUser } from '../db/pool.ts';
import { toolDeclarations } from '../model/declarations.ts';
import type { ChatModel, ModelReply } from '../model/types.ts';
import { AGENT_SPECS } from '../agents/registry.ts';
import { inlineArgs } from '../shared/inline-tools.ts';
import type { AgentName, ChatMessage } from '../shared/messages.ts';
import { storableJson, storableText } from '../shared/safe-text.ts';
import { toolMessage } from '../shared/tool-message.ts';
import { MODEL_CALLS_MAX_BYTES, TURN_RESULT_MAX_BYTES, boundMessages, boundReply, jsonBytes } from '../shared/payload-bounds.ts';
import type { ModelStepInput, ModelStepResult, RunToolInput, StepUsage } from './runtime-types.ts';
import { DeltaWriter } from './delta-writer.ts';
import type { Config } from '../config.ts';
import { askStructured, responseSchema } from '../model/structured.ts';

export interface ModelStepDeps {
  pool: pg.Pool;
  model: ChatModel;
  systemPrompt: (agent: AgentName) => Promise<string>;
  config: Pick<Config, 'MODEL_SCHEMA_ATTEMPTS'> & MeterConfig;
  /** the runTool activity's function: exactly once by call id, so a tool run here is never run twice */
  runTool: (input: RunToolInput, options?: WriteOptions) => Promise<unknown>;
}

type Step = Pick<ModelStepInput, 'conversationId' | 'userId' | 'agent' | 'stepId' | 'context' | 'mcpTools'>;

/** How often a model step heartbeats: the longest a Stop waits to reach it, once the server has it. */
export const STOP_HEARTBEAT_MS = 250;

/** The id of the n-th model call of a step (n >= 2); distinct from its calls' ids (`<stepId>.<i>`). */
const nthStepId = (stepId: string, n: number) => `${stepId}-s${n}`;

/** A chat call in the usage ledger: one per step id, so a retried attempt holds the same reservation. */
const chatCall = ({ conversationId, userId, stepId }: Step, model: string): LedgerCall => ({
  userId,
  conversationId,
  key: `chat:${conversationId}:${stepId}`,
  kind: 'chat',
  model,
});

/**
 * One model step: write what the workflow handed over, read the transcript (by reference, so history
 * stays small), call the model while streaming deltas as events, then write the answer and its usage.
 * With `inline`, a reply whose tool calls all need no workflow has them run here, and the model is asked
 * again with their results, so a lookup turn costs one activity instead of two plus a local one.
 */
export function createModelStep({ pool, model, systemPrompt, config, runTool }: ModelStepDeps) {
  const meter = createUsageMeter(pool, config);
  /**
   * A reply for `step`: the one a previous attempt already wrote (its answer lost on the way), or a new one.
   * Its write commits deferred when `goesOn` says the step will write again after it.
   */
  async function answer(
    step: Step,
    transcript: ChatMessage[],
    context: Context,
    commits: StepCommits,
    goesOn: (message: ChatMessage) => boolean,
  ): Promise<{ message: ChatMessage; usage: StepUsage }> {
    const { conversationId, userId, agent, stepId } = step;
    const earlier = transcript.find((message) => message.id === stepId);
    if (earlier) return { message: earlier, usage: await readUsage(pool, step) };

    const kernel = AGENT_SPECS[agent].kernel;
    const system = await systemPrompt(agent);
    const deltas = new DeltaWriter(pool, step, { attempt: context.info.attempt, deferCommit: await commits.defer() });
    let reply: ModelReply;
    let structured: unknown;
    /** what the stream reported so far: a stopped reply's tokens were paid for and count against budgets */
    let usedSoFar: ModelReply['usage'] | undefined;
    let tail: Awaited<ReturnType<DeltaWriter['close']>> = [];
    try {
      if (kernel) {
        // A JSON answer is not streamed (its raw text is no reply to show); it is checked and asked again.
        const output = { name: agent, schema: responseSchema(kernel.output.schema) };
        const spent = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
        structured = await askStructured(
          kernel.output.schema,
          config.MODEL_SCHEMA_ATTEMPTS,
          async (correction) => {
            reply = await model.generate({
              system,
              messages: correction ? [...transcript, { id: `${stepId}.correction`, role: 'user', text: correction }] : transcript,
              tools: [],
              ...(step.context ? { context: step.context } : {}),
              output,
              signal: context.cancellationSignal,
            });
            spent.inputTokens += reply.usage.inputTokens;
            spent.outputTokens += reply.usage.outputTokens;
            spent.totalTokens += reply.usage.totalTokens;
            return reply.text;
          },
          `The ${agent} model`,
        );
        reply = { ...reply!, text: kernel.output.text(structured), usage: spent };
      } else {
        reply = await model.generate({
          system,
          messages: transcript,
          tools: step.mcpTools?.length
            ? [...toolDeclarations(AGENT_SPECS[agent].tools), ...step.mcpTools]
            : toolDeclarations(AGENT_SPECS[agent].tools),
          onText: (delta) => deltas.push(delta),
          onUsage: (used) => (usedSoFar = used),
          signal: context.cancellationSignal,
        });
      }
    } catch (error) {
      if (!stoppedByUser(context)) throw asModelFailure(error);
      // Stop: the stream is closed (the abort signal reached @google/genai); what streamed stays, marked.
      const tailEvents = await deltas.close();
      const partial: ChatMessage = { id: stepId, role: 'assistant', text: deltas.streamed, stopped: true };
      const used = usedSoFar && { stepId, model: model.name, ...usedSoFar };
      // The stopped call is over: its reservation becomes what the stream reported (nothing, if it reported nothing).
      // A failure here leaves the reservation counted: Stop must still hand back what streamed.
      await meter
        .settle(chatCall(step, model.name), { model: model.name, usage: usedSoFar ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 } })
        .catch(() => undefined);
      await writeBatch(
        pool,
        { conversationId, userId },
        {
          messages: [partial],
          events: [...tailEvents, ...(used ? [{ key: `usage:${stepId}`, type: 'usage' as const, data: { ...used, stopped: true } }] : [])],
          ...(used ? { usage: used } : {}),
        },
      );
      commits.flushed();
      throw new StepStopped(partial);
    } finally {
      tail = await deltas.close();
    }

    // What the workflow acts on crosses Temporal whole (its calls' arguments, a structured answer), and the
    // workflow writes them again (tool messages, pending items): a reply past the bound is a failed call, not
    // a workflow whose next command is too large to schedule. Gemini's own output limit keeps real replies far below.
    const acted = jsonBytes(reply.toolCalls) + (structured === undefined ? 0 : jsonBytes(structured));
    if (acted > MODEL_CALLS_MAX_BYTES) {
      // the tokens were spent all the same
      await meter.settle(chatCall(step, model.name), { model: reply.model, usage: reply.usage });
      await commits.settle();
      throw ApplicationFailure.create({
        type: 'ModelOutputInvalid',
        message: `the model's reply was too large (its tool calls and structured answer were ${acted} bytes; at most ${MODEL_CALLS_MAX_BYTES} are accepted)`,
        nonRetryable: true,
      });
    }

    // The model's text and arguments are made storable before anyone sees them, so the workflow, the
    // tools and the transcript all hold the same value and no reply can fail a write.
    const message: ChatMessage = { id: stepId, role: 'assistant', text: storableText(reply.text) };
    if (structured !== undefined) message.structured = storableJson(structured);
    if (reply.toolCalls.length) {
      message.toolCalls = reply.toolCalls.map((call, index) => ({
        id: `${stepId}.${index + 1}`,
        name: storableText(call.name),
        args: storableJson(call.args),
      }));
    }
    const usage = { model: reply.model, ...reply.usage };
    await meter.settle(chatCall(step, model.name), { model: reply.model, usage: reply.usage });
    const ended = message.toolCalls ? [] : [{ key: `turn-ended:${stepId}`, type: 'turn.ended' as const, data: { messageId: stepId } }];
    const deferCommit = goesOn(message) && (await commits.defer());
    await writeBatch(
      pool,
      { conversationId, userId },
      {
        messages: [message],
        events: [...tail, { key: `usage:${stepId}`, type: 'usage', data: { stepId, ...usage } }, ...ended],
        usage: { stepId, ...usage },
      },
      { deferCommit },
    );
    if (!deferCommit) commits.flushed();
    return { message, usage };
  }

  /** Runs every call of a reply, or none: a tool that fails hands the whole reply to the workflow, whose retries it gets. */
  async function runCalls(input: ModelStepInput, message: ChatMessage, commits: StepCommits): Promise<ChatMessage[] | undefined> {
    const calls = message.toolCalls ?? [];
    const args = inlineArgs(input.agent, calls);
    if (!args) return undefined;
    // the next model call's answer (or settle) makes the tools' transactions durable
    const options = { deferCommit: await commits.defer() };
    const results: ChatMessage[] = [];
    try {
      for (const [index, call] of calls.entries()) {
        const result = await runTool(
          {
            conversationId: input.conversationId,
            userId: input.userId,
            agent: input.agent,
            ...(input.inline?.client ? { client: input.inline.client } : {}),
            callId: call.id,
            tool: call.name,
            args: args[index]!,
          },
          options,
        );
        results.push(toolMessage(call, args[index]!, result));
      }
    } catch {
      return undefined;
    }
    return results;
  }

  return async function modelStep(input: ModelStepInput): Promise<ModelStepResult> {
    const { conversationId, userId } = input;
    // Every path below that completes the activity ends with a durable write or settles: deferred until then.
    const commits = new StepCommits(pool);
    const transcript = await writeBatchReadTranscript(
      pool,
      { conversationId, userId },
      { messages: input.messages, events: input.events },
      { deferCommit: await commits.defer() },
    );

    // Heartbeat on a clock, not on tokens: a model that thinks long before its first token is alive,
    // while a worker that died stops heartbeating and its attempt is retried without waiting out the timeout.
    const context = Context.current();
    // Often, too: a heartbeat's answer is how a Stop reaches the step (the worker's heartbeat throttle is
    // as short, see stack/worker.ts), and Stop should close the model's stream within a second.
    const beat = setInterval(
      () => context.heartbeat(),
      Math.min(STOP_HEARTBEAT_MS, Math.max(100, (context.info.heartbeatTimeoutMs ?? 3000) / 3)),
    );
    const before: ChatMessage[] = [];
    const total: StepUsage = { model: '', inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    const limits = budgetLimits(budgetSettings(config), input.budget ?? { raises: 0 });
    try {
      for (let n = 1; ; n += 1) {
        const step: Step = { ...input, stepId: n === 1 ? input.stepId : nthStepId(input.stepId, n) };
        // Reserved against the budgets in one step per user, or not made: over a budget, or with the calls
        // in flight holding the rest (a retry whose answer is written already is not a new call).
        if (!transcript.some((message) => message.id === step.stepId)) {
          const over = await meter.reserve(chatCall(step, model.name), limits);
          if (over) {
            const none: ChatMessage = { id: step.stepId, role: 'assistant', text: '' };
            await commits.settle();
            return { message: none, overBudget: over, usage: total, ...(before.length ? { before: forWorkflow(before) } : {}) };
          }
        }
        const inlineNext = n <= (input.inline?.extraSteps ?? 0);
        const goesOn = (message: ChatMessage) =>
          inlineNext && !!message.toolCalls?.length && inlineArgs(input.agent, message.toolCalls) !== undefined;
        const { message, usage } = await answer(step, transcript, context, commits, goesOn);
        total.model = usage.model;
        total.inputTokens += usage.inputTokens;
        total.outputTokens += usage.outputTokens;
        total.totalTokens += usage.totalTokens;
        const results = inlineNext ? await runCalls(input, message, commits) : undefined;
        if (!results) {
          await commits.settle();
          return { message: boundReply(message), usage: total, ...(before.length ? { before: forWorkflow(before) } : {}) };
        }
        before.push(message, ...results);
        transcript.push(message, ...results);
        // Stopped between two calls: what is written stays, and no further model call is paid for.
        if (stoppedByUser(context)) throw new StepStopped(undefined);
      }
    } catch (error) {
      // The workflow learns what the step wrote before it let go, in the cancellation's details.
      if (error instanceof StepStopped) {
        // the workflow keeps what the step wrote before it let go: that must outlive a PostgreSQL crash
        await commits.settle();
        const stopped: StoppedStep = { before: forWorkflow(before), ...(error.partial ? { partial: boundReply(error.partial) } : {}) };
        throw new CancelledFailure(STEP_STOPPED, [stopped]);
      }
      throw error;
    } finally {
      clearInterval(beat);
    }
  };
}

/**
 * What the workflow is told the step did before its last reply (it only shows them): the tools' results and
 * long texts as stand-ins, within a budget, since the step's result crosses Temporal (2 MB at most). The
 * transcript holds them whole.
 */
const forWorkflow = (messages: ChatMessage[]): ChatMessage[] => boundMessages(messages, TURN_RESULT_MAX_BYTES);

/** Thrown inside the step when Stop cancelled it, with the reply cut short (if one was streaming). */
class StepStopped extends Error {
  readonly partial: ChatMessage | undefined;
  constructor(partial: ChatMessage | undefined) {
    super(STEP_STOPPED);
    this.partial = partial;
  }
}

/** Cancelled because the workflow asked (Stop), not because the worker shuts down or the activity timed out. */
function stoppedByUser(context: Context): boolean {
  return context.cancellationSignal.aborted && context.cancellationDetails?.cancelRequested === true;
}

async function readUsage(pool: pg.Pool, { conversationId, userId, stepId }: Step): Promise<StepUsage> {
  return asUser(pool, userId, async (db) => {
    const { rows } = await db.query(
      `SELECT model, input_tokens AS "inputTokens", output_tokens AS "outputTokens", total_tokens AS "totalTokens"
         FROM model_usage WHERE conversation_id = $1 AND step_id = $2`,
      [conversationId, stepId],
    );
    return rows[0] ?? { model: 'unknown', inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  });
}
