// One long-lived workflow per conversation. A turn runs detached from the handler that started it, so it
// can park on a pending item (the handler returns) and go on when a decision arrives (another handler waits).
// What differs between agents is data: their tools (and where each runs), the pending kinds' table, and an
// optional kernel for an agent that keeps state of its own (see src/shared/agent-kernel.ts).
// This file composes the parts, each a plain module tested without Temporal: the turn loop (turn-loop.ts),
// the pending items (pending-items.ts), the unsaved messages and events (event-log.ts), a stateful agent's
// state (agent-state.ts) and what continue-as-new carries (history.ts). Here are only the SDK's side: the
// activity proxies, the message handlers, child workflows and the run's end.
import {
  ActivityCancellationType,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
  log,
  makeContinueAsNewFunc,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { RuntimeActivities } from '../activities/runtime-types.ts';
import { bookkeepingActivities } from './bookkeeping.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import { type ChildToolInput, type ChildToolOutput, OpenPendingRequest } from '../shared/child-tool.ts';
import {
  agentActionUpdate,
  agentStateQuery,
  decideUpdate,
  decisionSignal,
  openPendingSignal,
  pendingOutcomeSignal,
  sendMessageUpdate,
  stateQuery,
  stopSignal,
  stopUpdate,
  upgradeSignal,
} from '../shared/definitions.ts';
import {
  type ChatMessage,
  type ChatSessionInput,
  type ConversationState,
  type JsonObject,
  SendMessageInput,
  type ToolCall,
} from '../shared/messages.ts';
import { WAITING_KEY } from '../shared/search-attributes.ts';
import { boundTurnResult, summaryLine } from '../shared/payload-bounds.ts';
import { type ToolSpec, describeIssues } from '../shared/tool-spec.ts';
import { AgentState } from './agent-state.ts';
import { EventLog } from './event-log.ts';
import { fail, userFacingReason } from './failure-text.ts';
import { handOn, mayContinueAsNew, takeOver } from './history.ts';
import { PendingItems, itemForChild } from './pending-items.ts';
import { McpTools } from './mcp-tools.ts';
import { handleMcpQuestions, mcpPorts } from './mcp-ports.ts';
import { TurnLoop } from './turn-loop.ts';

/** The conversation workflow's type, as clients start and query it (the workflow type name is `chatSession`). */
export type ChatSession = (input: ChatSessionInput) => Promise<void>;

/** chatSession over the catalog's agents; the bundle's entry exports it as `chatSession`, its workflow type. */
export function createChatSession(catalog: AgentCatalog): ChatSession {
  return async function chatSession(input) {
    return runChatSession(catalog, input);
  };
}

async function runChatSession(catalog: AgentCatalog, input: ChatSessionInput): Promise<void> {
  const { conversationId, userId, agent, settings } = input;
  const agentSpec = catalog.agent(agent);
  const kernel = agentSpec.kernel;

  // Timeout profiles. The model may stream for a while: a regular activity, heartbeating, retried a bounded
  // number of times. Tools and bookkeeping are short transactions, idempotent by call id and event key: local
  // activities, run within the workflow task that asks for them instead of costing a task round trip each.
  const model = proxyActivities<RuntimeActivities>({
    startToCloseTimeout: settings.modelTimeoutMs,
    heartbeatTimeout: Math.min(settings.modelTimeoutMs, 10_000),
    retry: { maximumAttempts: settings.modelMaxAttempts, initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '20s' },
    // Stop waits for the step to let go: it closes the model's stream, writes what streamed, and says so.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const tools = proxyLocalActivities<RuntimeActivities>({
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 5, initialInterval: '200ms', maximumInterval: '5s' },
  });
  const bookkeeping = bookkeepingActivities();
  // naming the conversation is a nicety: a short bounded call whose failure costs only the default title
  const titles = proxyActivities<RuntimeActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3, initialInterval: '1s' } });

  // MCP tools, when the conversation has servers (without, this asks Temporal for nothing: old histories replay).
  const mcp = new McpTools(input.mcpServers, mcpPorts(input));
  const findAny = (name: string) => catalog.findTool(agent, name) ?? mcp.find(name);

  const carried = takeOver(input, kernel);
  const events = new EventLog((batch) => bookkeeping.record({ conversationId, userId, ...batch }), carried.rejectedSignals);
  const pending = new PendingItems({
    record: (event) => events.event(event),
    setWaiting: (waiting) => upsertSearchAttributes([{ key: WAITING_KEY, value: waiting }]),
    argsOf: (tool) => findAny(tool)?.args,
    kindOf: (kind) => catalog.pendingKind(kind),
    carriedOpen: carried.openItems,
    carriedClosed: carried.closed,
  });
  const agentState = new AgentState({
    kernel,
    agent,
    state: carried.agentState,
    pending,
    events,
    ...(agentSpec.events ? { declaredEvents: agentSpec.events } : {}),
    newId: uuid4,
    logError: (message, attributes) => log.error(message, attributes),
  });
  /** child workflows this conversation runs now: the only ones that may open items in it */
  const children = new Set<string>();
  const loop: TurnLoop = new TurnLoop(
    {
      settings,
      pending,
      events,
      agent: agentState,
      tools: agentSpec.tools,
      findTool: findAny,
      modelStep: async (summary, { stepId, context, extraSteps, messages, events: newEvents, budget }) => {
        if (mcp.enabled) await mcp.ready();
        return model.modelStep.executeWithOptions({ summary }, [
          {
            conversationId,
            userId,
            agent,
            stepId,
            ...(context ? { context } : {}),
            ...(extraSteps ? { inline: { extraSteps, ...(input.client ? { client: input.client } : {}) } } : {}),
            messages,
            events: newEvents,
            ...(budget ? { budget } : {}),
            ...(mcp.declarations().length ? { mcpTools: mcp.declarations() } : {}),
          },
        ]);
      },
      runTool: (call, args) =>
        mcp.find(call.name)
          ? mcp.call(call, args)
          : tools.runTool.executeWithOptions({ summary: summaryLine(`${call.name} ${JSON.stringify(args)}`) }, [
              { conversationId, userId, agent, client: input.client, callId: call.id, tool: call.name, args },
            ]),
      runChild,
      condition,
      newScope: () => {
        const scope = new CancellationScope();
        return { run: (fn) => scope.run(fn), cancel: () => scope.cancel() };
      },
      details: setCurrentDetails,
      newId: uuid4,
      logError: (message, attributes) => log.error(message, attributes),
      failureText: userFacingReason,
    },
    carried,
  );

  handleMcpQuestions(mcp, { loop, pending, events });

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
    setCurrentDetails(`Turn ${loop.turns}: ${call.name} runs as child workflow ${workflowId}.`);
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

  /** The title made from the first exchange, detached: the person has the reply without waiting for it. */
  async function nameConversation(said: string, messages: ChatMessage[]): Promise<void> {
    const answered = messages
      .filter((m) => m.role === 'assistant' && m.text)
      .map((m) => m.text)
      .join('\n');
    try {
      await titles.titleConversation.executeWithOptions({ summary: 'title from the first exchange' }, [
        { conversationId, userId, defaultTitle: input.title, said, answered },
      ]);
    } catch (error) {
      log.warn('The conversation keeps its default title', { reason: String(error) });
    }
  }

  const state = (): ConversationState => ({
    status: loop.status(),
    pending: pending.items(),
    turns: loop.turns,
    usage: loop.usage,
    rejectedSignals: events.rejectedSignals,
    ...(kernel ? { agentState: agentState.view() } : {}),
    ...(loop.budgetRaises ? { budgetRaises: loop.budgetRaises } : {}),
  });

  // ---- decisions -------------------------------------------------------------------------------

  setHandler(
    decideUpdate,
    async (raw) => {
      const logStart = loop.logLength;
      const said = agentState.decide(pending.check(raw));
      if (!said) return loop.waitForBoundary(logStart);
      await events.flush();
      if (!loop.active) loop.idleDetails();
      return boundTurnResult({ messages: said, pending: pending.items() });
    },
    {
      validator: (decision) => void pending.check(decision),
      description: 'Decide a pending item; answers with what the turn did next.',
    },
  );

  setHandler(
    decisionSignal,
    async (payload) => {
      try {
        agentState.decide(pending.check(payload));
      } catch (error) {
        // A bad signal must never fail the workflow: record why it was ignored and move on.
        const reason = error instanceof Error ? error.message : String(error);
        log.warn('Ignored a decision signal', { reason });
        events.signalRejected(`signal-rejected:${uuid4()}`, reason, payload);
      }
      if (!loop.active) await events.flush();
    },
    {
      description:
        'A decision from the Web UI or CLI: {"pendingId": "<id from the state query>", "decision": "approve" | "reject" | "edit" | "yes" | "no" | "accept" | "decline" | "cancel", "reason"?, "args"? (edit; an answer to a question), "choice"? (yes)}. A bad payload is recorded as a signal.rejected event and ignored.',
    },
  );

  setHandler(
    agentActionUpdate,
    async ({ name, args }) => {
      agentState.act(name, args);
      await events.flush();
      if (!loop.active) loop.idleDetails();
      return state();
    },
    {
      // Kernels are pure, so the validator can run the action on a dry context and refuse what would fail.
      validator: ({ name, args }) => agentState.checkAction(name, args),
      description: 'An action on the agent\'s own state outside a turn, e.g. {"name": "markStepDone", "args": {"stepId": "s2"}}.',
    },
  );

  setHandler(
    openPendingSignal,
    (raw) => {
      const parsed = OpenPendingRequest.safeParse(raw);
      // the wire's kinds are open strings: the catalog says which ones mean something
      const unknownKind = parsed.success && !catalog.pendingKind(parsed.data.kind);
      if (!parsed.success || !children.has(parsed.data.owner) || unknownKind) {
        const reason = !parsed.success
          ? describeIssues(parsed.error)
          : unknownKind
            ? `openPending of kind "${parsed.data.kind}", which no agent of the catalog declares`
            : 'openPending from a workflow this conversation is not running';
        events.signalRejected(`signal-rejected:${uuid4()}`, reason, raw);
        return;
      }
      const request = parsed.data;
      const item = itemForChild(request, Date.now());
      void loop.park(item, request.deadlineMs, request.onTimeout).then(async (outcome) => {
        try {
          await getExternalWorkflowHandle(request.owner).signal(pendingOutcomeSignal, { requestId: request.requestId, ...outcome });
        } catch (error) {
          log.warn('The child that asked for a pending item is gone', { owner: request.owner, reason: String(error) });
        }
      });
    },
    {
      description:
        'From a child workflow of this conversation, sent by askParent: {"requestId", "owner": "<the child\'s workflow ID>", "kind", "tool", "callId", "args", "decisions", "deadlineMs", "onTimeout", "prompt"?, "options"?, "details"?}. From any other workflow, or malformed, it is recorded as a signal.rejected event and ignored.',
    },
  );

  // ---- turns -----------------------------------------------------------------------------------

  setHandler(
    sendMessageUpdate,
    async ({ text }) => {
      const message: ChatMessage = { id: uuid4(), role: 'user', text: text.trim() };
      // Only runs started without a title carry autoTitle, so histories recorded before it replay unchanged.
      const first = input.autoTitle === true && loop.turns === 0 && !loop.active;
      const result = await loop.receive(message);
      if (first && !result.stopped) void nameConversation(message.text, result.messages);
      return result;
    },
    {
      validator: (raw) => {
        const parsed = SendMessageInput.safeParse(raw);
        if (!parsed.success) throw fail('BadInput', `Invalid message: ${describeIssues(parsed.error)}`);
        if (loop.active && !loop.parked) throw fail('TurnRunning', 'A turn is already running; send the message when it ends.');
      },
      description: 'A user message: {"text": "..."}; answers with the turn\'s new messages once it ends or waits for a person.',
    },
  );

  // ---- stop -------------------------------------------------------------------------------------

  setHandler(
    stopUpdate,
    async () => {
      if (!loop.stop()) return { stopped: false };
      await loop.waitForEnd();
      return { stopped: true };
    },
    {
      description:
        'Stop the running turn: cancels the model call and tools in flight, withdraws the items it waits on, keeps what streamed (marked stopped). Answers {"stopped": true} once it has ended, {"stopped": false} when no turn ran.',
    },
  );

  setHandler(stopSignal, () => void loop.stop(), {
    description:
      'Stop the running turn, from the Web UI or CLI (no payload; any payload is ignored). Does what the stop update does; nothing when no turn runs.',
  });

  setHandler(
    upgradeSignal,
    // Nothing to do: the signal's workflow task carries the server's word that the target version changed,
    // and the wait below reads it.
    () => undefined,
    {
      description:
        'Wake this conversation so that it moves to the current worker version: once no turn runs it continues as new there (no payload; any payload is ignored). A conversation already on the current version does nothing.',
    },
  );

  setHandler(stateQuery, state, {
    description: 'The conversation now: idle, running or waiting, its open items, counters and agent state.',
  });
  // A query adds no command: histories recorded before it replay as they were.
  setHandler(agentStateQuery, () => (kernel ? { agentState: agentState.state } : {}), {
    description: "A stateful agent's own state as this run holds it; what a revival from PostgreSQL starts the new run with.",
  });

  loop.idleDetails();
  pending.syncWaiting();
  await condition(() =>
    mayContinueAsNew({
      turnActive: loop.active,
      allHandlersFinished,
      suggested: () => workflowInfo().continueAsNewSuggested,
      turnsThisRun: loop.turnsThisRun,
      afterTurns: settings.continueAsNewAfterTurns,
      upgradable: () => workflowInfo().targetWorkerDeploymentVersionChanged,
    }),
  );
  await events.flush();
  // A pinned run would hand its pin on to the next one: moving to the current version is asked for explicitly.
  const next = workflowInfo().targetWorkerDeploymentVersionChanged
    ? makeContinueAsNewFunc<ChatSession>({ initialVersioningBehavior: 'AUTO_UPGRADE' })
    : (args: ChatSessionInput) => continueAsNew<ChatSession>(args);
  await next({
    ...input,
    carried: handOn({
      turns: loop.turns,
      usage: loop.usage,
      rejectedSignals: events.rejectedSignals,
      closed: pending.closedItems(),
      budgetRaises: loop.budgetRaises,
      ...(kernel ? { agent: { state: agentState.state, openItems: pending.items() } } : {}),
    }),
  });
}
