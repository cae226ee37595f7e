// One long-lived workflow per conversation. A turn runs detached from the handler that started it, so it
// can park on a pending item (the handler returns) and go on when a decision arrives (another handler waits).
// What differs between agents is data: their tools (and where each runs), the pending kinds' table, and an
// optional kernel for an agent that keeps state of its own (see src/shared/agent-kernel.ts).
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
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
import type { KernelContext, KernelEffects } from '../shared/agent-kernel.ts';
import { KernelRefusal } from '../shared/agent-kernel.ts';
import { AGENT_SPECS, findTool } from '../agents/registry.ts';
import { type ChildToolInput, type ChildToolOutput, OpenPendingRequest } from '../shared/child-tool.ts';
import {
  agentActionUpdate,
  decideUpdate,
  decisionSignal,
  openPendingSignal,
  pendingOutcomeSignal,
  sendMessageUpdate,
  stateQuery,
} from '../shared/definitions.ts';
import type { FailureType } from '../shared/failures.ts';
import {
  type ChatMessage,
  type ChatSessionInput,
  type ClosedReason,
  type ConversationState,
  DecisionInput,
  type DecisionName,
  type JsonObject,
  type NewEvent,
  type PendingItem,
  SendMessageInput,
  type ToolCall,
  type TurnResult,
  emptyUsage,
} from '../shared/messages.ts';
import { PENDING_KINDS_SPEC } from '../agents/registry.ts';
import { WAITING_KEY } from '../shared/search-attributes.ts';
import { toolMessage } from '../shared/tool-message.ts';
import { type ToolSpec, describeIssues } from '../shared/tool-spec.ts';
import { userFacingReason } from './failure-text.ts';

interface OpenItem {
  item: PendingItem;
  decision?: DecisionInput;
  /** set when a user message answered the item instead of a decision */
  supersededBy?: string;
}

/** how many closed items a run hands to the next one */
const CLOSED_CARRIED = 100;

const fail = (type: FailureType, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

export async function chatSession(input: ChatSessionInput): Promise<void> {
  const { conversationId, userId, agent, settings } = input;
  const agentSpec = AGENT_SPECS[agent];
  const kernel = agentSpec.kernel;

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
  let agentState: unknown = input.carried ? input.carried.agentState : kernel?.init(input.init);

  const open = new Map<string, OpenItem>();
  for (const item of input.carried?.openItems ?? []) open.set(item.id, { item });
  const closed = new Map<string, ClosedReason>(input.carried?.closed ?? []);
  /** child workflows this conversation runs now: the only ones that may open items in it */
  const children = new Set<string>();
  let turnActive = false;
  /** bumped whenever a turn ends or parks: what handlers wait for */
  let boundary = 0;
  /** the current turn's messages, returned by the handlers that wait on it */
  let turnLog: ChatMessage[] = [];
  /** written by the next activity, so bookkeeping rides along with work that happens anyway */
  let unsavedMessages: ChatMessage[] = [];
  let unsavedEvents: NewEvent[] = [];
  /** a user message that arrived while the turn was parked; it enters the transcript after the tool results */
  let interjection: ChatMessage | undefined;
  let waitingAttribute = false;

  const scopeOf = (item: PendingItem) => PENDING_KINDS_SPEC[item.kind].scope;
  const undecided = () => [...open.values()].filter((entry) => !entry.decision);
  const pendingItems = () => undecided().map((entry) => entry.item);
  /** the turn waits for a person: a message may answer, a decision may come */
  const parked = () => turnActive && undecided().some((entry) => scopeOf(entry.item) === 'turn');

  const state = (): ConversationState => ({
    status: !turnActive ? 'idle' : parked() ? 'waiting' : 'running',
    pending: pendingItems(),
    turns,
    usage,
    rejectedSignals,
    ...(kernel ? { agentState: kernel.view(agentState, pendingItems()) } : {}),
  });

  const idleDetails = () => {
    const waiting = pendingItems();
    setCurrentDetails(
      waiting.length
        ? `Idle after ${turns} turn(s); waiting for a decision on ${waiting.map((item) => `${item.kind} ${item.id}`).join(', ')}.`
        : `Idle after ${turns} turn(s): waiting for the next message.`,
    );
  };

  /** Keeps BrigadeWaitingForHuman true exactly while some item waits for a person. */
  const syncWaiting = () => {
    const waiting = undecided().length > 0;
    if (waiting === waitingAttribute) return;
    waitingAttribute = waiting;
    upsertSearchAttributes([{ key: WAITING_KEY, value: waiting }]);
  };

  const drainUnsaved = () => {
    const batch = { messages: unsavedMessages, events: unsavedEvents };
    unsavedMessages = [];
    unsavedEvents = [];
    return batch;
  };

  // Every promise the workflow makes costs the SDK a stack trace (its promise hook, ~0.1 ms of CPU each), so
  // the hot path skips awaits that would do nothing.
  const hasUnsaved = () => unsavedMessages.length > 0 || unsavedEvents.length > 0;

  const flush = async () => {
    if (!hasUnsaved()) return;
    await bookkeeping.record({ conversationId, userId, ...drainUnsaved() });
  };

  const waitForBoundary = (logStart: number): Promise<TurnResult> => {
    const start = boundary;
    return condition(() => boundary > start).then(() => ({ messages: turnLog.slice(logStart), pending: pendingItems() }));
  };

  const kernelContext = (): KernelContext => ({
    newId: uuid4,
    now: () => new Date().toISOString(),
    openItems: pendingItems(),
  });

  // ---- pending items ---------------------------------------------------------------------------

  function opened(item: PendingItem): void {
    unsavedEvents.push({ key: `pending-opened:${item.id}`, type: 'pending.opened', data: item });
  }

  function close(entry: OpenItem, reason: ClosedReason, decision: DecisionInput, timedOut = false): void {
    open.delete(entry.item.id);
    closed.set(entry.item.id, reason);
    unsavedEvents.push({
      key: `pending-closed:${entry.item.id}`,
      type: 'pending.closed',
      data: {
        id: entry.item.id,
        kind: entry.item.kind,
        decision: decision.decision,
        reason: decision.reason ?? null,
        ...(decision.choice !== undefined ? { choice: decision.choice } : {}),
        closedAs: reason,
        timedOut,
        supersededBy: entry.supersededBy ?? null,
      },
    });
    syncWaiting();
  }

  /**
   * Opens a turn-scoped item and waits for a decision, a message that answers it, or the deadline. The turn
   * parks meanwhile: the handler that waits on the turn returns with the item.
   */
  async function waitOnItem(
    item: PendingItem,
    deadlineMs: number,
    onTimeout: DecisionName,
  ): Promise<{ decision: DecisionInput; timedOut: boolean; supersededBy?: string }> {
    const entry: OpenItem = { item };
    open.set(item.id, entry);
    opened(item);
    syncWaiting();
    setCurrentDetails(
      `Waiting for a human: ${orList(item.decisions)} ${item.tool} ${JSON.stringify(item.args)} (${item.kind} ${item.id}) until ${item.expiresAt}.`,
    );
    boundary += 1;
    // Written while the human thinks: the open item reaches event subscribers without delaying the reply.
    await flush();
    const decided = await condition(() => entry.decision !== undefined, deadlineMs);
    const decision: DecisionInput = decided
      ? entry.decision!
      : { pendingId: item.id, decision: onTimeout, reason: 'No decision before the deadline.' };
    const superseded = entry.supersededBy !== undefined && !PENDING_KINDS_SPEC[item.kind].messageIsAnswer;
    close(entry, !decided ? 'expired' : superseded ? 'superseded' : 'decided', decision, !decided);
    setCurrentDetails(`Turn ${turns}: ${item.kind} ${item.id} closed with "${decision.decision}".`);
    return { decision, timedOut: !decided, supersededBy: entry.supersededBy };
  }

  /** Applies what a kernel call decided; returns the assistant messages it said. */
  function applyEffects(effects: KernelEffects<unknown>): ChatMessage[] {
    agentState = effects.state;
    for (const { id, reason } of effects.close ?? []) {
      const entry = open.get(id);
      if (entry) close(entry, reason, { pendingId: id, decision: 'reject', reason: `closed: ${reason}` });
    }
    if (effects.open) {
      const { deadlineMs, id, ...rest } = effects.open;
      const item: PendingItem = {
        ...rest,
        id: id ?? uuid4(),
        ...(deadlineMs ? { expiresAt: new Date(Date.now() + deadlineMs).toISOString() } : {}),
      };
      open.set(item.id, { item });
      opened(item);
    }
    unsavedEvents.push(...(effects.events ?? []));
    const said = (effects.say ?? []).map((text): ChatMessage => ({ id: uuid4(), role: 'assistant', text }));
    unsavedMessages.push(...said);
    syncWaiting();
    return said;
  }

  // ---- decisions -------------------------------------------------------------------------------

  /** Throws the failure the API maps to 400/404/409/422; shared by the update validator and the signal. */
  function checkDecision(raw: unknown): DecisionInput {
    const parsed = DecisionInput.safeParse(raw);
    if (!parsed.success) throw fail('BadInput', `Invalid decision: ${describeIssues(parsed.error)}`);
    const decision = parsed.data;
    const entry = open.get(decision.pendingId);
    const shortId = decision.pendingId.length > 80 ? `${decision.pendingId.slice(0, 80)}…` : decision.pendingId;
    if (!entry) {
      const reason = closed.get(decision.pendingId);
      if (reason) throw fail('NotPending', `Pending item ${shortId} is not pending any more (${reason}).`);
      throw fail('UnknownPending', `No pending item ${shortId} in this conversation.`);
    }
    if (entry.decision) {
      // Name what really happened: a message that answered the item is not a decision someone else made.
      const what = entry.supersededBy ? 'answered by a chat message sent just before' : 'decided';
      throw fail('NotPending', `Pending item ${shortId} is not pending any more (${what}).`);
    }
    const { item } = entry;
    if (item.expiresAt && Date.parse(item.expiresAt) <= Date.now()) {
      throw fail('NotPending', `Pending item ${shortId} is not pending any more (expired).`);
    }
    if (!item.decisions.includes(decision.decision)) {
      throw fail('DecisionMismatch', `"${decision.decision}" does not fit a ${item.kind}; allowed: ${item.decisions.join(', ')}.`);
    }
    if (decision.decision === 'edit') {
      const spec = findTool(agent, item.tool);
      if (!decision.args) throw fail('DecisionMismatch', 'An edit needs "args": the arguments to run the tool with.');
      const checked = spec?.args.safeParse(decision.args);
      if (!checked?.success) {
        throw fail('DecisionMismatch', `Edited arguments do not fit ${item.tool}: ${checked ? describeIssues(checked.error) : 'unknown tool'}`);
      }
    }
    const problem = PENDING_KINDS_SPEC[item.kind].check?.(item, decision);
    if (problem) throw fail('DecisionMismatch', problem);
    return decision;
  }

  /** Records a checked decision; a conversation-scoped item is settled here, by the kernel, at once. */
  function applyDecision(decision: DecisionInput): ChatMessage[] | undefined {
    const entry = open.get(decision.pendingId)!;
    if (scopeOf(entry.item) === 'turn') {
      entry.decision = decision;
      return undefined;
    }
    // The kernel decides before anything changes, so a refusal leaves the item open and the state as it was.
    const effects = kernel ? kernelCall(() => kernel.onDecision(agentState, entry.item, decision, kernelContext())) : undefined;
    entry.decision = decision;
    close(entry, 'decided', decision);
    return effects ? applyEffects(effects) : [];
  }

  /**
   * A kernel's refusal becomes the failure the API maps to its status; any other error is reported as a
   * conflict, since an exception escaping a handler would fail the workflow task again and again.
   */
  function kernelCall<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof KernelRefusal) throw fail(error.type, error.message);
      log.error('A kernel call failed', { reason: String(error) });
      throw fail('Conflict', 'The agent could not apply that decision to its state.');
    }
  }

  setHandler(
    decideUpdate,
    async (raw) => {
      const logStart = turnLog.length;
      const said = applyDecision(checkDecision(raw));
      if (!said) return waitForBoundary(logStart);
      await flush();
      if (!turnActive) idleDetails();
      return { messages: said, pending: pendingItems() };
    },
    {
      validator: (decision) => void checkDecision(decision),
      description: 'Decide a pending item; answers with what the turn did next.',
    },
  );

  setHandler(
    decisionSignal,
    async (payload) => {
      try {
        applyDecision(checkDecision(payload));
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
      }
      if (!turnActive) await flush();
    },
    {
      description:
        'A decision from the Web UI or CLI: {"pendingId": "<id from the state query>", "decision": "approve" | "reject" | "edit" | "yes" | "no" | "accept", "reason"?, "args"? (edit), "choice"? (yes)}. A bad payload is recorded as a signal.rejected event and ignored.',
    },
  );

  setHandler(
    agentActionUpdate,
    async ({ name, args }) => {
      const action = kernel!.actions[name]!;
      applyEffects(kernelCall(() => action.apply(agentState, action.args.parse(args), kernelContext())));
      await flush();
      if (!turnActive) idleDetails();
      return state();
    },
    {
      // Kernels are pure, so the validator can run the action on a dry context and refuse what would fail.
      validator: ({ name, args }) => {
        const action = kernel?.actions[name];
        if (!action) throw fail('NotFound', `The ${agent} agent has no action "${String(name).slice(0, 80)}".`);
        const parsed = action.args.safeParse(args);
        if (!parsed.success) throw fail('BadInput', `Invalid action: ${describeIssues(parsed.error)}`);
        try {
          action.apply(agentState, parsed.data, { newId: () => 'dry-run', now: () => new Date().toISOString(), openItems: pendingItems() });
        } catch (error) {
          if (error instanceof KernelRefusal) throw fail(error.type, error.message);
          throw error;
        }
      },
      description: "An action on the agent's own state outside a turn, e.g. {\"name\": \"markStepDone\", \"args\": {\"stepId\": \"s2\"}}.",
    },
  );

  setHandler(
    openPendingSignal,
    (raw) => {
      const parsed = OpenPendingRequest.safeParse(raw);
      if (!parsed.success || !children.has(parsed.data.owner)) {
        rejectedSignals += 1;
        unsavedEvents.push({
          key: `signal-rejected:${uuid4()}`,
          type: 'signal.rejected',
          data: {
            reason: parsed.success ? 'openPending from a workflow this conversation is not running' : describeIssues(parsed.error),
            payload: summarisePayload(raw),
          },
        });
        return;
      }
      const request = parsed.data;
      const item: PendingItem = {
        id: request.requestId,
        kind: request.kind,
        tool: request.tool,
        callId: request.callId,
        args: request.args,
        decisions: request.decisions,
        expiresAt: new Date(Date.now() + request.deadlineMs).toISOString(),
        ...(request.prompt ? { prompt: request.prompt } : {}),
        ...(request.options ? { options: request.options } : {}),
        ...(request.details ? { details: request.details } : {}),
      };
      void waitOnItem(item, request.deadlineMs, request.onTimeout).then(async (outcome) => {
        try {
          await getExternalWorkflowHandle(request.owner).signal(pendingOutcomeSignal, { requestId: request.requestId, ...outcome });
        } catch (error) {
          log.warn('The child that asked for a pending item is gone', { owner: request.owner, reason: String(error) });
        }
      });
    },
    { description: 'From a child workflow of this conversation: open a pending item for it (sent by askParent).' },
  );

  // ---- turns -----------------------------------------------------------------------------------

  setHandler(
    sendMessageUpdate,
    async ({ text }) => {
      const message: ChatMessage = { id: uuid4(), role: 'user', text: text.trim() };
      if (turnActive) {
        // Parked: the message answers each open item of the turn the way its kind says (a refusal, a choice).
        const logStart = turnLog.length;
        for (const entry of undecided()) {
          if (scopeOf(entry.item) !== 'turn') continue;
          const answer = PENDING_KINDS_SPEC[entry.item.kind].fromMessage(entry.item, message.text);
          if (!answer) continue;
          entry.decision = answer;
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
        if (turnActive && !parked()) throw fail('TurnRunning', 'A turn is already running; send the message when it ends.');
      },
      description: 'A user message: {"text": "..."}; answers with the turn\'s new messages once it ends or waits for a person.',
    },
  );

  setHandler(stateQuery, state);

  async function runTurn(userMessage: ChatMessage): Promise<void> {
    turns += 1;
    turnsThisRun += 1;
    unsavedMessages.push(userMessage);
    let invalidCalls = 0;
    try {
      for (let step = 1; ; ) {
        if (step > settings.maxSteps) {
          await finish(`I stopped after ${settings.maxSteps} steps without reaching an answer. Please rephrase or narrow the request.`);
          return;
        }
        setCurrentDetails(`Turn ${turns}, step ${step}: waiting for the model.`);
        const called = await callModel(step);
        if (!called) return;
        const { reply, modelCalls } = called;
        step += modelCalls;
        if (kernel && reply.structured !== undefined) {
          const said = applyEffects(kernel.onAnswer(agentState, reply.structured, kernelContext()));
          turnLog.push(...said);
          await flush();
        }
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
          await finish(`I stopped: the model made ${invalidCalls} invalid tool calls in this turn. Please rephrase the request.`);
          return;
        }
      }
    } catch (error) {
      // Only bookkeeping that failed all its retries (or a kernel bug) gets here; the conversation stays usable.
      log.error('Turn failed', { reason: String(error) });
      turnLog.push({ id: uuid4(), role: 'assistant', text: `The turn failed (${userFacingReason(error)}). Please try again.` });
    } finally {
      // Turn-scoped items belong to their turn: one that failed while parked must not leave them open.
      for (const entry of [...open.values()]) {
        if (scopeOf(entry.item) === 'turn') close(entry, 'superseded', { pendingId: entry.item.id, decision: 'reject', reason: 'the turn ended' });
      }
      interjection = undefined;
      turnActive = false;
      idleDetails();
      boundary += 1;
      // What the failure path or the cleanup left unsaved (the finally's events) is written now.
      if (hasUnsaved()) await flush().catch((error: unknown) => log.error('Could not record the end of a turn', { reason: String(error) }));
    }
  }

  /** One model step; it may run tools that need no person itself and ask the model again (`inline`). */
  async function callModel(step: number): Promise<{ reply: ChatMessage; modelCalls: number } | undefined> {
    const stepId = uuid4();
    const extraSteps = settings.inlineTools === false ? 0 : settings.maxSteps - step;
    try {
      const { message, before = [], usage: used } = await model.modelStep.executeWithOptions(
        { summary: `model: turn ${turns}, step ${step}${extraSteps ? ' (runs tools that need no person, then asks again)' : ''}` },
        [
          {
            conversationId,
            userId,
            agent,
            stepId,
            ...(kernel ? { context: kernel.context(agentState) } : {}),
            ...(extraSteps ? { inline: { extraSteps, ...(input.client ? { client: input.client } : {}) } } : {}),
            ...drainUnsaved(),
          },
        ],
      );
      const modelCalls = 1 + before.filter((message) => message.role === 'assistant').length;
      usage.inputTokens += used.inputTokens;
      usage.outputTokens += used.outputTokens;
      usage.totalTokens += used.totalTokens;
      usage.calls += modelCalls;
      turnLog.push(...before, message);
      return { reply: message, modelCalls };
    } catch (error) {
      log.error('Model step failed', { reason: String(error) });
      await finish(`The model could not answer (${userFacingReason(error)}). Nothing else was done; please try again.`);
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
      const { decision, supersededBy } = await waitOnItem(item, deadlineMs, spec.policy.onTimeout);
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
    if (spec.runner?.kind === 'child') {
      const { result, cards } = await runChild(spec, call, args);
      addToolMessage(call, args, result, cards);
      return true;
    }
    const result = await tools.runTool
      .executeWithOptions({ summary: `${call.name} ${JSON.stringify(args)}` }, [
        { conversationId, userId, agent, client: input.client, callId: call.id, tool: call.name, args },
      ])
      .catch((error: unknown) => ({ error: `The tool failed (${userFacingReason(error)}).` }));
    turnLog.push(toolMessage(call, args, result));
    return true;
  }

  /** A tool that is a workflow of its own: started as a child with a readable ID, awaited, its result recorded. */
  async function runChild(spec: ToolSpec, call: ToolCall, args: JsonObject): Promise<ChildToolOutput> {
    const runner = spec.runner as Extract<ToolSpec['runner'], { kind: 'child' }>;
    const id = uuid4();
    const workflowId = `${runner.idPrefix}-${id}`;
    const childInput: ChildToolInput = {
      id,
      conversationId,
      userId,
      ...(input.client ? { client: input.client } : {}),
      parentWorkflowId: workflowInfo().workflowId,
      callId: call.id,
      tool: call.name,
      args,
      settings,
    };
    children.add(workflowId);
    setCurrentDetails(`Turn ${turns}: ${call.name} runs as child workflow ${workflowId}.`);
    try {
      return await executeChild<(input: ChildToolInput) => Promise<ChildToolOutput>>(runner.workflow, {
        workflowId,
        args: [childInput],
        staticSummary: `${call.name} for conversation ${conversationId}`,
      });
    } catch (error) {
      log.error('Child tool failed', { workflowId, reason: String(error) });
      return { result: { error: `The tool failed (${userFacingReason(error)}).` } };
    } finally {
      children.delete(workflowId);
    }
  }

  function addToolMessage(call: ToolCall, args: JsonObject, result: unknown, cards?: JsonObject[]): void {
    const message = toolMessage(call, args, result, cards);
    turnLog.push(message);
    unsavedMessages.push(message);
  }

  idleDetails();
  syncWaiting();
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
    carried: {
      turns,
      usage,
      rejectedSignals,
      closed: [...closed].slice(-CLOSED_CARRIED),
      ...(kernel ? { agentState, openItems: pendingItems() } : {}),
    },
  });
}

/** "approve, reject or edit" */
function orList(words: readonly string[]): string {
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}

function summarisePayload(payload: unknown): unknown {
  const text = JSON.stringify(payload) ?? 'undefined';
  return text.length > 500 ? `${text.slice(0, 500)}…` : payload;
}
