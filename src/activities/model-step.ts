import { randomUUID } from 'node:crypto';
import { CancelledFailure, Context } from '@temporalio/activity';
import { STEP_STOPPED, type StoppedStep, budgetLimits } from '../shared/turn-control.ts';
import { type MeterConfig, budgetSettings, createUsageMeter } from './usage-meter.ts';
import type { LedgerCall, LedgerSettlement } from '../db/usage-ledger.ts';
import { asModelFailure } from './model-failure.ts';
import type pg from 'pg';
import { type ReadWindow, type WriteOptions, writeBatch, writeBatchReadWindow } from '../db/batch.ts';
import { StepCommits } from '../db/commit-durability.ts';
import { readStepUsage } from '../db/step-usage.ts';
import { toolDeclarations } from '../model/declarations.ts';
import { addUsage } from '../shared/usage-sum.ts';
import { estimateTokens, requestTokens, stoppedCallUsage, tokenCalibration } from '../model/token-estimate.ts';
import { contextBudget } from '../model/context-size.ts';
import { isContextTooLong } from '../model/too-long.ts';
import { type ContextWindow, buildWindow, withSummary } from '../context/window.ts';
import { RUNTIME_TOOLS } from '../shared/runtime-tools.ts';
import type { ToolDeclaration } from '../model/types.ts';
import type { ChatModel, ModelReply } from '../model/types.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import { inlineArgs } from '../shared/inline-tools.ts';
import type { AgentName, ChatMessage, NewEvent } from '../shared/messages.ts';
import { toolMessage } from '../shared/tool-message.ts';
import { TURN_RESULT_MAX_BYTES, boundMessages, boundReply } from '../shared/payload-bounds.ts';
import type { ModelStepInput, ModelStepResult, RunToolInput, StepUsage } from './runtime-types.ts';
import { DeltaWriter } from './delta-writer.ts';
import type { PreviewCalls } from './approval-preview.ts';
import type { Config } from '../config.ts';
import { type Asked, askKernel, oversized, replyMessage, streamReply } from './model-reply.ts';
import type { StopNotices } from './stop-notices.ts';
import type { FollowStop, StepHandoffs } from './step-handoff.ts';
import { cancelledByWorkflow, heartbeatOnClock } from './step-heartbeat.ts';

export interface ModelStepDeps {
  catalog: AgentCatalog;
  pool: pg.Pool;
  model: ChatModel;
  systemPrompt: (agent: AgentName) => Promise<string>;
  config: Pick<Config, 'MODEL_SCHEMA_ATTEMPTS'> & Partial<Pick<Config, 'MODEL_CONTEXT_TOKENS'>> & MeterConfig;
  /** the runTool activity's function: exactly once by call id, so a tool run here is never run twice */
  runTool: (input: RunToolInput, options?: WriteOptions) => Promise<unknown>;
  /** the previews of the calls of a reply that will ask a person (approval-preview.ts); without it, none */
  previewCalls?: PreviewCalls;
  /** how a Stop reaches a step run within its workflow task; without it, only the workflow's cancellation does */
  stops?: StopNotices;
  /** where a step that outruns its workflow task goes on (step-handoff.ts); without it, it runs to its end in the task */
  handoffs?: StepHandoffs;
}

type Step = Pick<ModelStepInput, 'conversationId' | 'userId' | 'agent' | 'stepId' | 'context' | 'mcpTools' | 'regenerate'> & {
  attempt?: number;
  /** the call made again with a smaller window, after the model said the request was too long */
  shrunk?: boolean;
};

/** What one call of a step sends: its window of the conversation, and the tools beside the agent's own. */
interface Sent {
  window: ContextWindow;
  system: string;
  extraTools: readonly ToolDeclaration[];
}

/** Rows a step reads of a conversation with this token budget: more than can fit it, however small they are. */
const rowLimit = (budget: number) => Math.ceil(budget / 10) + 50;

/** The id of the n-th model call of a step (n >= 2); distinct from its calls' ids (`<stepId>.<i>`). */
const nthStepId = (stepId: string, n: number) => `${stepId}-s${n}`;

/**
 * A chat call in the usage ledger: one per step id and attempt, since a failed attempt settles at what it used
 * (a retry's reservation is its own, and a Stop in the retry wait leaves nothing open).
 */
const chatCall = ({ conversationId, userId, stepId, attempt = 1, shrunk }: Step, model: string): LedgerCall => ({
  userId,
  conversationId,
  key: `chat:${conversationId}:${stepId}${attempt > 1 ? `:${attempt}` : ''}${shrunk ? ':shrunk' : ''}`,
  kind: 'chat',
  model,
});

/**
 * One model step: write what the workflow handed over, read the transcript (by reference, so history
 * stays small), call the model while streaming deltas as events, then write the answer and its usage.
 * With `inline`, a reply whose tool calls all need no workflow has them run here, and the model is asked
 * again with their results, so a lookup turn costs one model step instead of two plus a tool's.
 */
export function createModelStep({ catalog, pool, model, systemPrompt, config, runTool, previewCalls, stops, handoffs }: ModelStepDeps) {
  const meter = createUsageMeter(pool, config);
  /** the usage ledger's record of a call's tokens, reserved before it */
  const meterUsage = (step: Step, used: { model: string; usage: ModelReply['usage'] }) => meter.settle(chatCall(step, model.name), used);
  /** what a call of `step` sends, estimated before it is made (only when a budget is set): the part that must fit */
  const sending = (step: Step, sent: Sent) => async () => {
    const spec = catalog.agent(step.agent);
    const tools = spec.kernel ? [] : [...toolDeclarations(spec.tools), ...sent.extraTools];
    return requestTokens({ system: sent.system, transcript: sent.window.messages, tools });
  };

  /** The tokens a step of `agent` may send: the agent's own budget, MODEL_CONTEXT_TOKENS, or the model's default. */
  const budgetOf = (agent: string) => contextBudget(model.name, config.MODEL_CONTEXT_TOKENS, catalog.agent(agent).contextTokens);

  /**
   * What the next call sends (src/context/window.ts): the summary beside the system prompt, the newest messages
   * that fit the budget (divided by `shrink` after the model said a request was too long), and `recall` when
   * something is shown as a stub or cut.
   */
  async function prepare(step: Step, read: ReadWindow, messages: ChatMessage[], shrink: number): Promise<Sent> {
    const spec = catalog.agent(step.agent);
    const base = await systemPrompt(step.agent);
    const tools = spec.kernel ? [] : [...toolDeclarations(spec.tools), ...(step.mcpTools ?? [])];
    const fixedTokens =
      estimateTokens(base) +
      (tools.length ? estimateTokens(JSON.stringify(tools)) : 0) +
      (step.context ? estimateTokens(JSON.stringify(step.context)) : 0);
    const window = buildWindow({
      messages,
      ...(read.summary ? { summary: read.summary } : {}),
      fixedTokens,
      // the budget in the estimate's units: what the provider has counted per estimated token so far
      budget: Math.floor(budgetOf(step.agent) / shrink / tokenCalibration.ratio),
      readCut: read.cut,
    });
    const recall = !spec.kernel && (window.elided.length > 0 || window.cut.length > 0) ? toolDeclarations(RUNTIME_TOOLS) : [];
    return { window, system: withSummary(base, window.summary), extraTools: [...(step.mcpTools ?? []), ...recall] };
  }

  /**
   * The person is told, as the model is by its note, of a message too large for the window on its own: the model
   * read only its beginning (an event per message, once: its key is the message's).
   */
  async function tellOfCuts({ conversationId, userId }: Step, cut: string[], commits: StepCommits): Promise<void> {
    if (!cut.length) return;
    const events = cut.map((messageId) => ({ key: `context-cut:${messageId}`, type: 'context.cut', data: { messageId } }));
    await writeBatch(pool, { conversationId, userId }, { events }, { deferCommit: await commits.defer() });
  }

  /**
   * A reply for `step`: the one a previous attempt already wrote (its answer lost on the way), or a new one.
   * Its write commits deferred when `goesOn` says the step will write again after it.
   */
  async function answer(
    step: Step,
    transcript: ChatMessage[],
    sent: Sent,
    stop: StepStop,
    commits: StepCommits,
    goesOn: (message: ChatMessage) => boolean,
  ): Promise<{ message: ChatMessage; usage: StepUsage }> {
    const earlier = transcript.find((message) => message.id === step.stepId);
    if (earlier) return { message: earlier, usage: await readStepUsage(pool, step, step.stepId) };
    const { asked, tail } = await askModel(step, sent, stop, commits);
    const tooLarge = oversized(asked);
    if (tooLarge) {
      // the tokens were spent all the same
      await meterUsage(step, { model: asked.reply.model, usage: asked.reply.usage });
      await commits.settle();
      throw tooLarge;
    }
    // the window was sized by an estimate: what the provider counted corrects the next one
    tokenCalibration.reconcile(sent.window.tokens, asked.reply.usage.inputTokens);
    const message = replyMessage(step.stepId, asked);
    const usage = { model: asked.reply.model, ...asked.reply.usage };
    const settle = meter.settlement(chatCall(step, model.name), { model: asked.reply.model, usage: asked.reply.usage });
    await recordAnswer(step, message, usage, settle, tail, commits, goesOn(message));
    return { message, usage };
  }

  /** Asks the model, streaming deltas; when Stop cancels the step, writes what streamed and throws StepStopped. */
  async function askModel(step: Step, sent: Sent, stop: StepStop, commits: StepCommits): Promise<{ asked: Asked; tail: NewEvent[] }> {
    const spec = catalog.agent(step.agent);
    const { system } = sent;
    const transcript = sent.window.messages;
    const deltas = new DeltaWriter(pool, step, { attempt: stop.attempt, deferCommit: await commits.defer() });
    if (stop.attempt > 1) deltas.restart();
    // a regenerate's call is seeded by its step: another answer each time, the same one on a retry
    const ask = {
      model,
      agent: step.agent,
      stepId: step.stepId,
      system,
      transcript,
      signal: stop.signal,
      ...(step.regenerate ? { seed: step.stepId } : {}),
    };
    const seen: { usage?: ModelReply['usage'] } = {};
    // a stream stopped before the provider said what it used was billed all the same: estimated, never nothing
    const stoppedUsage = () => stoppedCallUsage(seen.usage, { system, transcript }, deltas.streamed);
    let asked: Asked;
    let tail: NewEvent[] = [];
    try {
      // stopped before it was sent (a Stop in a retry wait reaches the next attempt): nothing was billed
      if (stop.byUser()) return recordStopped(step, deltas, { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, commits);
      asked = spec.kernel
        ? await askKernel(spec.kernel, ask, step.context, config.MODEL_SCHEMA_ATTEMPTS, seen)
        : await streamReply(spec.tools, ask, sent.extraTools, deltas, seen);
      // Some SDKs end a stream quietly when it is aborted (OpenAI's, Anthropic's) where Gemini's throws: the
      // answer is as cut either way, and is recorded as stopped, not as complete.
      if (stop.byUser()) return recordStopped(step, deltas, stoppedUsage(), commits);
    } catch (error) {
      if (!stop.byUser()) {
        // a failed attempt settles at what it used (nothing, when nothing came back): never left open
        const used = seen.usage || deltas.streamed ? stoppedUsage() : { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
        await meterUsage(step, { model: model.name, usage: used }).catch(() => undefined);
        // asked again with a smaller window, once (runStep): never a turn that fails for good by its size
        if (!step.shrunk && isContextTooLong(error)) throw new ContextTooLong();
        throw asModelFailure(error);
      }
      return recordStopped(step, deltas, stoppedUsage(), commits);
    } finally {
      tail = await deltas.close();
    }
    return { asked, tail };
  }

  /** Stop: the stream is closed (the abort signal reached the model's SDK); what streamed stays, marked. */
  async function recordStopped(step: Step, deltas: DeltaWriter, usedSoFar: ModelReply['usage'], commits: StepCommits): Promise<never> {
    const { conversationId, userId, stepId } = step;
    const tailEvents = await deltas.close();
    const partial: ChatMessage = { id: stepId, role: 'assistant', text: deltas.streamed, stopped: true };
    const used = { stepId, model: model.name, ...usedSoFar };
    // The stopped call is over: its reservation becomes what it used, as reported or estimated.
    // A failure here leaves the reservation counted: Stop must still hand back what streamed.
    await meterUsage(step, { model: model.name, usage: usedSoFar }).catch(() => undefined);
    await writeBatch(
      pool,
      { conversationId, userId },
      {
        messages: [partial],
        events: [...tailEvents, { key: `usage:${stepId}`, type: 'usage' as const, data: { ...used, stopped: true } }],
        usage: used,
      },
    );
    commits.flushed();
    throw new StepStopped(partial);
  }

  /** The answer, its streamed tail, its usage, the call's settlement and (without tool calls) the turn's end, in one write. */
  async function recordAnswer(
    { conversationId, userId, stepId }: Step,
    message: ChatMessage,
    usage: StepUsage,
    settle: LedgerSettlement,
    tail: NewEvent[],
    commits: StepCommits,
    goesOn: boolean,
  ): Promise<void> {
    const ended = message.toolCalls ? [] : [{ key: `turn-ended:${stepId}`, type: 'turn.ended' as const, data: { messageId: stepId } }];
    const deferCommit = goesOn && (await commits.defer());
    await writeBatch(
      pool,
      { conversationId, userId },
      {
        messages: [message],
        events: [...tail, { key: `usage:${stepId}`, type: 'usage', data: { stepId, ...usage } }, ...ended],
        usage: { stepId, ...usage },
        settle,
      },
      { deferCommit },
    );
    if (!deferCommit) commits.flushed();
  }

  /** Runs every call of a reply, or none: a tool that fails hands the whole reply to the workflow, whose retries it gets. */
  async function runCalls(input: ModelStepInput, message: ChatMessage, commits: StepCommits): Promise<ChatMessage[] | undefined> {
    const calls = message.toolCalls ?? [];
    const args = inlineArgs(catalog, input.agent, calls);
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

  /** Writes what the workflow handed over and reads the summary and the newest messages, in one round trip. */
  async function loadWindow(
    { conversationId, userId, messages, events, agent }: ModelStepInput,
    commits: StepCommits,
  ): Promise<ReadWindow> {
    const limit = rowLimit(budgetOf(agent));
    return writeBatchReadWindow(pool, { conversationId, userId }, { messages, events }, limit, { deferCommit: await commits.defer() });
  }

  return async function modelStep(input: ModelStepInput): Promise<ModelStepResult> {
    const context = Context.current();
    if (!handoffs || !context.info.isLocal) return runStep(input, context, undefined);
    const key = `${input.conversationId}:${input.stepId}:${context.info.attempt}:${randomUUID()}`;
    return handoffs.run(key, context.info.attempt + (input.attemptBase ?? 0), (follow) => runStep(input, context, follow));
  };

  async function runStep(input: ModelStepInput, context: Context, follow: FollowStop | undefined): Promise<ModelStepResult> {
    // Every path below that completes the activity ends with a durable write or settles: deferred until then.
    const commits = new StepCommits(pool);
    const read = await loadWindow(input, commits);
    const transcript = read.messages;
    let compactThrough: string | undefined;
    const compaction = () => (compactThrough ? { compactThrough } : {});
    const stop = await stepStop(context, input, stops, follow);
    const before: ChatMessage[] = [];
    const total: StepUsage = { model: '', inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    const limits = budgetLimits(budgetSettings(config), input.budget ?? { raises: 0 });
    try {
      for (let n = 1; ; n += 1) {
        const step: Step = { ...input, stepId: n === 1 ? input.stepId : nthStepId(input.stepId, n), attempt: stop.attempt };
        // Reserved against the budgets in one step per user, or not made: what it sends would pass a budget,
        // with the calls in flight holding their part (a retry whose answer is written already is not a new call).
        const inlineNext = n <= (input.inline?.extraSteps ?? 0);
        const goesOn = (message: ChatMessage) =>
          inlineNext && !!message.toolCalls?.length && inlineArgs(catalog, input.agent, message.toolCalls) !== undefined;
        let answered: { message: ChatMessage; usage: StepUsage } | undefined;
        for (const shrink of [1, 2]) {
          const current: Step = shrink > 1 ? { ...step, shrunk: true } : step;
          const sent = await prepare(current, read, transcript, shrink);
          compactThrough = sent.window.compactThrough ?? compactThrough;
          await tellOfCuts(current, sent.window.cut, commits);
          if (!transcript.some((message) => message.id === step.stepId)) {
            const over = await meter.reserve(chatCall(current, model.name), limits, sending(current, sent));
            if (over) {
              const none: ChatMessage = { id: step.stepId, role: 'assistant', text: '' };
              await commits.settle();
              return {
                message: none,
                overBudget: over,
                usage: total,
                ...(before.length ? { before: forWorkflow(before) } : {}),
                ...compaction(),
              };
            }
          }
          try {
            answered = await answer(current, transcript, sent, stop, commits, goesOn);
            break;
          } catch (error) {
            if (!(error instanceof ContextTooLong)) throw error;
            // the model counts otherwise than the estimate: half the window now, and the older turns folded after
            compactThrough = compactThrough ?? lastFoldable(transcript);
          }
        }
        const { message, usage } = answered!;
        Object.assign(total, addUsage(total, usage), { model: usage.model });
        const results = inlineNext ? await runCalls(input, message, commits) : undefined;
        if (!results) {
          await commits.settle();
          // what an approval of this reply would touch, looked up now: the workflow opens the items next
          const previews = message.toolCalls?.length && previewCalls ? await previewCalls(input, message.toolCalls) : undefined;
          return {
            message: boundReply(message),
            usage: total,
            ...(before.length ? { before: forWorkflow(before) } : {}),
            ...(previews ? { previews } : {}),
            ...compaction(),
          };
        }
        before.push(message, ...results);
        transcript.push(message, ...results);
        // Stopped between two calls: what is written stays, and no further model call is paid for.
        if (stop.byUser()) throw new StepStopped(undefined);
      }
    } catch (error) {
      // The workflow learns what the step wrote before it let go, in the cancellation's details.
      if (error instanceof StepStopped) {
        // the workflow keeps what the step wrote before it let go: that must outlive a PostgreSQL crash
        await commits.settle();
        const stopped: StoppedStep = { before: forWorkflow(before), ...(error.partial ? { partial: boundReply(error.partial) } : {}) };
        // A notice stopped it, not the workflow, which hears of the Stop once this task ends: an answer, not a failure.
        if (stop.noticed()) return { message: { id: input.stepId, role: 'assistant', text: '' }, usage: total, interrupted: stopped };
        throw new CancelledFailure(STEP_STOPPED, [stopped]);
      }
      throw error;
    } finally {
      stop.release();
    }
  }
}

/**
 * What the workflow is told the step did before its last reply (it only shows them): the tools' results and
 * long texts as stand-ins, within a budget, since the step's result crosses Temporal (2 MB at most). The
 * transcript holds them whole.
 */
const forWorkflow = (messages: ChatMessage[]): ChatMessage[] => boundMessages(messages, TURN_RESULT_MAX_BYTES);

/** The model refused the request as longer than its window: asked again once with half the window. */
class ContextTooLong extends Error {
  constructor() {
    super('the request was longer than the model accepts');
  }
}

/** Where a fold can end when the window did not say: before the newest user message (the current turn stays whole). */
function lastFoldable(messages: readonly ChatMessage[]): string | undefined {
  const at = messages.findLastIndex((message) => message.role === 'user');
  return at > 0 ? messages[at - 1]!.id : undefined;
}

/** Thrown inside the step when Stop cancelled it, with the reply cut short (if one was streaming). */
class StepStopped extends Error {
  readonly partial: ChatMessage | undefined;
  constructor(partial: ChatMessage | undefined) {
    super(STEP_STOPPED);
    this.partial = partial;
  }
}

/** How a Stop reaches a step: the workflow's cancellation, and for a step run as a local activity, a notice too. */
interface StepStop {
  readonly signal: AbortSignal;
  readonly attempt: number;
  /** stopped by a person (a cancellation the workflow asked for, or a notice), not a shutdown or a timeout */
  byUser(): boolean;
  /** stopped by a notice before the workflow asked */
  noticed(): boolean;
  release(): void;
}

async function stepStop(
  context: Context,
  input: ModelStepInput,
  stops: StopNotices | undefined,
  follow: FollowStop | undefined,
): Promise<StepStop> {
  const attempt = context.info.attempt + (input.attemptBase ?? 0);
  // a regular activity: a conversation begun before model steps ran within the workflow task, or one run again
  if (!context.info.isLocal) {
    return {
      signal: context.cancellationSignal,
      attempt,
      byUser: () => cancelledByWorkflow(context),
      noticed: () => false,
      release: heartbeatOnClock(context),
    };
  }
  const watch = stops && input.turnStartedAt !== undefined ? await stops.watch(input.conversationId, input.turnStartedAt) : undefined;
  const followed = () => follow?.byUser() ?? false;
  return {
    // the local activity's cancellation, a Stop's notice, and once handed off, its follow-up's cancellation
    signal: AbortSignal.any([context.cancellationSignal, ...(watch ? [watch.signal] : []), ...(follow ? [follow.signal] : [])]),
    attempt,
    byUser: () => cancelledByWorkflow(context) || (watch?.signal.aborted ?? false) || followed(),
    noticed: () => (watch?.signal.aborted ?? false) && !context.cancellationSignal.aborted && !followed(),
    release: () => watch?.release(),
  };
}
