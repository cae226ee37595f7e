// One long-lived workflow per conversation. A turn runs detached from the handler that started it, so it
// can park on a pending item (the handler returns) and go on when a decision arrives (another handler waits).
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { RuntimeActivities } from '../activities/runtime-types.ts';
import { AGENT_SPECS, findTool } from '../shared/agents.ts';
import { decideUpdate, decisionSignal, sendMessageUpdate, stateQuery } from '../shared/definitions.ts';
import type { FailureType } from '../shared/failures.ts';
import {
  type ChatMessage,
  type ChatSessionInput,
  type ConversationState,
  DecisionInput,
  type JsonObject,
  type NewEvent,
  type PendingItem,
  SendMessageInput,
  type ToolCall,
  type TurnResult,
  emptyUsage,
} from '../shared/messages.ts';
import { toolMessage } from '../shared/tool-message.ts';
import { type ToolSpec, describeIssues } from '../shared/tool-spec.ts';
import { WAITING_KEY } from '../shared/search-attributes.ts';

interface OpenItem {
  item: PendingItem;
  decision?: DecisionInput;
  /** set when a user message answered the item instead of a decision */
  supersededBy?: string;
}

/** What a closed item became, so a late decision gets "not pending any more" rather than "unknown". */
type ClosedReason = 'decided' | 'expired' | 'superseded';
/** how many closed items a run hands to the next one */
const CLOSED_CARRIED = 100;

const fail = (type: FailureType, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

export async function chatSession(input: ChatSessionInput): Promise<void> {
  const { conversationId, userId, agent, settings } = input;
  const agentSpec = AGENT_SPECS[agent];

  // Timeout profiles. The model may stream for a while: a regular activity, heartbeating, retried a bounded
  // number of times. Tools and bookkeeping are short transactions, idempotent by call id and event key: local
  // activities, run within the workflow task that asks for them instead of costing a task round trip each.
  const model = proxyActivities<RuntimeActivities>({
    startToCloseTimeout: settings.modelTimeoutMs,
    heartbeatTimeout: Math.min(settings.modelTimeoutMs, 10_000),
    retry: { maximumAttempts: settings.modelMaxAttempts, initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '20s' },
  });
  const tools = proxyLocalActivities<RuntimeActivities>({
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 5, initialInterval: '200ms', maximumInterval: '5s' },
  });
  const bookkeeping = proxyLocalActivities<RuntimeActivities>({
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: 10, initialInterval: '200ms', maximumInterval: '5s' },
  });

  let turns = input.carried?.turns ?? 0;
  let turnsThisRun = 0;
  const usage = input.carried?.usage ?? emptyUsage();
  let rejectedSignals = input.carried?.rejectedSignals ?? 0;

  const open = new Map<string, OpenItem>();
  const closed = new Map<string, ClosedReason>(input.carried?.closed ?? []);
  let turnActive = false;
  let parked = false;
  /** bumped whenever a turn ends or parks: what handlers wait for */
  let boundary = 0;
  /** the current turn's messages, returned by the handlers that wait on it */
  let turnLog: ChatMessage[] = [];
  /** written by the next activity, so bookkeeping rides along with work that happens anyway */
  let unsavedMessages: ChatMessage[] = [];
  let unsavedEvents: NewEvent[] = [];
  /** a user message that arrived while the turn was parked; it enters the transcript after the tool results */
  let interjection: ChatMessage | undefined;

  const pendingItems = () => [...open.values()].filter((entry) => !entry.decision).map((entry) => entry.item);

  const state = (): ConversationState => ({
    status: !turnActive ? 'idle' : parked ? 'waiting' : 'running',
    pending: pendingItems(),
    turns,
    usage,
    rejectedSignals,
  });

  const idleDetails = () => setCurrentDetails(`Idle after ${turns} turn(s): waiting for the next message.`);

  const drainUnsaved = () => {
    const batch = { messages: unsavedMessages, events: unsavedEvents };
    unsavedMessages = [];
    unsavedEvents = [];
    return batch;
  };

  const flush = async () => {
    if (!unsavedMessages.length && !unsavedEvents.length) return;
    await bookkeeping.record({ conversationId, userId, ...drainUnsaved() });
  };

  const waitForBoundary = async (logStart: number): Promise<TurnResult> => {
    const start = boundary;
    await condition(() => boundary > start);
    return { messages: turnLog.slice(logStart), pending: pendingItems() };
  };

  // ---- decisions -------------------------------------------------------------------------------

  /** Throws the failure the API maps to 400/404/409/422; shared by the update validator and the signal. */
  function checkDecision(raw: unknown): DecisionInput {
    const parsed = DecisionInput.safeParse(raw);
    if (!parsed.success) throw fail('BadInput', `Invalid decision: ${describeIssues(parsed.error)}`);
    const decision = parsed.data;
    const entry = open.get(decision.pendingId);
    if (!entry) {
      const reason = closed.get(decision.pendingId);
      if (reason) throw fail('NotPending', `Pending item ${decision.pendingId} is not pending any more (${reason}).`);
      throw fail('UnknownPending', `No pending item ${decision.pendingId} in this conversation.`);
    }
    if (entry.decision) throw fail('NotPending', `Pending item ${decision.pendingId} is not pending any more (decided).`);
    const { item } = entry;
    if (item.expiresAt && Date.parse(item.expiresAt) <= Date.now()) {
      throw fail('NotPending', `Pending item ${decision.pendingId} is not pending any more (expired).`);
    }
    if (!item.decisions.includes(decision.decision)) {
      throw fail(
        'DecisionMismatch',
        `"${decision.decision}" does not fit a ${item.kind}; allowed: ${item.decisions.join(', ')}.`,
      );
    }
    if (decision.decision === 'edit') {
      const spec = findTool(agent, item.tool);
      if (!decision.args) throw fail('DecisionMismatch', 'An edit needs "args": the arguments to run the tool with.');
      const checked = spec?.args.safeParse(decision.args);
      if (!checked?.success) {
        throw fail(
          'DecisionMismatch',
          `Edited arguments do not fit ${item.tool}: ${checked ? describeIssues(checked.error) : 'unknown tool'}`,
        );
      }
    }
    if (decision.decision === 'yes' && item.choices?.length && !item.choices.includes(decision.choice ?? '')) {
      throw fail('DecisionMismatch', `"choice" must be one of: ${item.choices.join(', ')}.`);
    }
    return decision;
  }

  setHandler(
    decideUpdate,
    async (raw) => {
      const logStart = turnLog.length;
      const decision = checkDecision(raw);
      open.get(decision.pendingId)!.decision = decision;
      return waitForBoundary(logStart);
    },
    { validator: (decision) => void checkDecision(decision) },
  );

  setHandler(decisionSignal, async (payload) => {
    try {
      const decision = checkDecision(payload);
      open.get(decision.pendingId)!.decision = decision;
    } catch (error) {
      // A bad signal must never fail the workflow: record why it was ignored and move on.
      rejectedSignals += 1;
      const reason = error instanceof Error ? error.message : String(error);
      log.warn('Ignored a decision signal', { reason });
      unsavedEvents.push({
        key: `signal-rejected:${uuid4()}`,
        type: 'signal.rejected',
        data: { reason, payload: summarisePayload(payload) },
      });
      if (!turnActive) await flush();
    }
  });

  // ---- turns -----------------------------------------------------------------------------------

  setHandler(
    sendMessageUpdate,
    async ({ text }) => {
      const message: ChatMessage = { id: uuid4(), role: 'user', text: text.trim() };
      if (turnActive) {
        // Parked: the message answers every open item with "no", carrying the text as the reason.
        const logStart = turnLog.length;
        for (const entry of open.values()) {
          if (entry.decision) continue;
          entry.decision = { pendingId: entry.item.id, decision: entry.item.kind === 'confirmation' ? 'no' : 'reject', reason: message.text };
          entry.supersededBy = message.id;
        }
        interjection = message;
        turnLog.push(message);
        return waitForBoundary(logStart);
      }
      turnActive = true;
      turnLog = [message];
      const result = waitForBoundary(0);
      void runTurn(message);
      return result;
    },
    {
      validator: (raw) => {
        const parsed = SendMessageInput.safeParse(raw);
        if (!parsed.success) throw fail('BadInput', `Invalid message: ${describeIssues(parsed.error)}`);
        if (turnActive && !parked) throw fail('TurnRunning', 'A turn is already running; send the message when it ends.');
      },
    },
  );

  setHandler(stateQuery, state);

  async function runTurn(userMessage: ChatMessage): Promise<void> {
    turns += 1;
    turnsThisRun += 1;
    unsavedMessages.push(userMessage);
    let invalidCalls = 0;
    try {
      for (let step = 1; ; step += 1) {
        if (step > settings.maxSteps) {
          await finish(`I stopped after ${settings.maxSteps} steps without reaching an answer. Please rephrase or narrow the request.`);
          return;
        }
        setCurrentDetails(`Turn ${turns}, step ${step}: waiting for the model.`);
        const reply = await callModel(step);
        if (!reply) return;
        const calls = reply.toolCalls ?? [];
        if (!calls.length) return;
        for (const call of calls) {
          const valid = await handleCall(call);
          if (!valid) invalidCalls += 1;
        }
        if (interjection) {
          unsavedMessages.push(interjection);
          interjection = undefined;
        }
        if (invalidCalls > settings.maxToolErrors) {
          await finish(
            `I stopped: the model made ${invalidCalls} invalid tool calls in this turn. Please rephrase the request.`,
          );
          return;
        }
      }
    } catch (error) {
      // Only bookkeeping that failed all its retries gets here; the conversation must stay usable.
      log.error('Turn failed', { reason: rootMessage(error) });
      turnLog.push({ id: uuid4(), role: 'assistant', text: `The turn failed (${rootMessage(error)}). Please try again.` });
    } finally {
      // Items belong to their turn: one that failed while parked must not leave them open.
      for (const id of open.keys()) closed.set(id, 'superseded');
      open.clear();
      turnActive = false;
      parked = false;
      idleDetails();
      boundary += 1;
    }
  }

  async function callModel(step: number): Promise<ChatMessage | undefined> {
    const stepId = uuid4();
    try {
      const { message, usage: used } = await model.modelStep.executeWithOptions(
        { summary: `model: turn ${turns}, step ${step}` },
        [{ conversationId, userId, agent, stepId, ...drainUnsaved() }],
      );
      usage.inputTokens += used.inputTokens;
      usage.outputTokens += used.outputTokens;
      usage.totalTokens += used.totalTokens;
      usage.calls += 1;
      turnLog.push(message);
      return message;
    } catch (error) {
      const reason = rootMessage(error);
      log.error('Model step failed', { reason });
      await finish(`The model could not answer (${reason}). Nothing else was done; please try again.`);
      return undefined;
    }
  }

  /** Ends the turn with a message of the runtime's own (limits, failures), persisted with what is unsaved. */
  async function finish(text: string): Promise<void> {
    const message: ChatMessage = { id: uuid4(), role: 'assistant', text };
    turnLog.push(message);
    unsavedMessages.push(message);
    await flush();
  }

  /** Runs or refuses one call; false when the model's call itself was invalid. */
  async function handleCall(call: ToolCall): Promise<boolean> {
    const spec = findTool(agent, call.name);
    if (!spec) {
      const names = agentSpec.tools.map((tool) => tool.name).join(', ') || 'none';
      addToolMessage(call, call.args, { error: `Unknown tool "${call.name}". Available tools: ${names}.` });
      return false;
    }
    const parsed = spec.args.safeParse(call.args);
    if (!parsed.success) {
      addToolMessage(call, call.args, { error: `Invalid arguments for ${call.name}: ${describeIssues(parsed.error)}` });
      return false;
    }
    let args = parsed.data as JsonObject;
    if (spec.policy.approval) {
      const { decision, supersededBy } = await awaitApproval(call, args, spec);
      if (decision.decision === 'reject' || decision.decision === 'no') {
        const why = decision.reason?.trim() || 'no reason given';
        addToolMessage(call, args, {
          status: 'rejected',
          error: supersededBy
            ? `Not run: the user answered with a message instead of approving: "${why}"`
            : `The user rejected this call: ${why}`,
        });
        return true;
      }
      if (decision.decision === 'edit' && decision.args) args = spec.args.parse(decision.args) as JsonObject;
    }
    const result = await tools.runTool
      .executeWithOptions({ summary: `${call.name} ${JSON.stringify(args)}` }, [
        { conversationId, userId, agent, client: input.client, callId: call.id, tool: call.name, args },
      ])
      .catch((error: unknown) => ({ error: `The tool failed: ${rootMessage(error)}` }));
    const message = toolMessage(call, args, result);
    turnLog.push(message);
    return true;
  }

  function addToolMessage(call: ToolCall, args: JsonObject, result: JsonObject): void {
    const message = toolMessage(call, args, result);
    turnLog.push(message);
    unsavedMessages.push(message);
  }

  async function awaitApproval(
    call: ToolCall,
    args: JsonObject,
    spec: ToolSpec,
  ): Promise<{ decision: DecisionInput; supersededBy?: string }> {
    const deadlineMs = spec.policy.deadlineMs ?? settings.approvalTimeoutMs;
    const item: PendingItem = {
      id: uuid4(),
      kind: 'approval',
      tool: call.name,
      callId: call.id,
      args,
      decisions: spec.policy.decisions,
      expiresAt: new Date(Date.now() + deadlineMs).toISOString(),
    };
    const entry: OpenItem = { item };
    open.set(item.id, entry);
    unsavedEvents.push({ key: `pending-opened:${item.id}`, type: 'pending.opened', data: item });
    parked = true;
    upsertSearchAttributes([{ key: WAITING_KEY, value: true }]);
    setCurrentDetails(
      `Waiting for a human: approve, reject or edit ${item.tool} ${JSON.stringify(args)} (pending ${item.id}) until ${item.expiresAt}.`,
    );
    boundary += 1;
    // Written while the human thinks: the open item reaches event subscribers without delaying the reply.
    await flush();
    const decided = await condition(() => entry.decision !== undefined, deadlineMs);
    const decision: DecisionInput = decided
      ? entry.decision!
      : { pendingId: item.id, decision: spec.policy.onTimeout, reason: 'No decision before the deadline.' };
    open.delete(item.id);
    closed.set(item.id, !decided ? 'expired' : entry.supersededBy ? 'superseded' : 'decided');
    unsavedEvents.push({
      key: `pending-closed:${item.id}`,
      type: 'pending.closed',
      data: { id: item.id, decision: decision.decision, reason: decision.reason ?? null, timedOut: !decided, supersededBy: entry.supersededBy ?? null },
    });
    parked = false;
    upsertSearchAttributes([{ key: WAITING_KEY, value: false }]);
    setCurrentDetails(`Turn ${turns}: ${item.tool} ${decision.decision === 'reject' ? 'rejected' : 'approved'}.`);
    return { decision, supersededBy: entry.supersededBy };
  }

  idleDetails();
  // Continue-as-new only between turns and once every handler has returned, so nothing is cut off.
  await condition(
    () =>
      !turnActive &&
      allHandlersFinished() &&
      (workflowInfo().continueAsNewSuggested ||
        (settings.continueAsNewAfterTurns > 0 && turnsThisRun >= settings.continueAsNewAfterTurns)),
  );
  await flush();
  await continueAsNew<typeof chatSession>({
    ...input,
    carried: { turns, usage, rejectedSignals, closed: [...closed].slice(-CLOSED_CARRIED) },
  });
}

function rootMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

function summarisePayload(payload: unknown): unknown {
  const text = JSON.stringify(payload) ?? 'undefined';
  return text.length > 500 ? `${text.slice(0, 500)}…` : payload;
}
