// One long-lived workflow per conversation. A turn runs detached from the handler that started it, so it
// can park on a pending item (the handler returns) and go on when a decision arrives (another handler waits).
// What differs between agents is data: their tools (and where each runs), the pending kinds' table, and an
// optional kernel for an agent that keeps state of its own (see src/shared/agent-kernel.ts).
// This function only composes the parts, each in a module of its own: the activities (session-activities.ts),
// the books (event-log.ts, pending-items.ts, agent-state.ts, history.ts), the turn (turn-machine.ts, driven
// by turn-loop.ts through turn-ports.ts), child workflows (child-runs.ts), the message handlers
// (decision-handlers.ts, turn-handlers.ts, mcp-ports.ts) and the run's end (run-end.ts).
import { log, patched, upsertSearchAttributes, uuid4 } from '@temporalio/workflow';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import type { ChatSessionInput } from '../shared/messages.ts';
import { WAITING_KEY } from '../shared/search-attributes.ts';
import { AgentState } from './agent-state.ts';
import { ChildRuns } from './child-runs.ts';
import { Compaction } from './compaction.ts';
import { AGENT_STATE_SNAPSHOT, agentStateEvent, handleBranches } from './branch-handlers.ts';
import { handleDecisions } from './decision-handlers.ts';
import { EventLog } from './event-log.ts';
import { takeOver } from './history.ts';
import { handleMcpQuestions, mcpPorts } from './mcp-ports.ts';
import { McpTools } from './mcp-tools.ts';
import { PendingItems } from './pending-items.ts';
import { continueWhenDue } from './run-end.ts';
import type { Session } from './session.ts';
import { sessionActivities } from './session-activities.ts';
import { handleQueries, handleStop, handleTurns } from './turn-handlers.ts';
import { TurnLoop } from './turn-loop.ts';
import { turnPorts } from './turn-ports.ts';

/** The conversation workflow's type, as clients start and query it (the workflow type name is `chatSession`). */
export type ChatSession = (input: ChatSessionInput) => Promise<void>;

/** chatSession over the catalog's agents; the bundle's entry exports it as `chatSession`, its workflow type. */
export function createChatSession(catalog: AgentCatalog): ChatSession {
  return async function chatSession(input) {
    return runChatSession(catalog, input);
  };
}

async function runChatSession(catalog: AgentCatalog, input: ChatSessionInput): Promise<void> {
  const { conversationId, userId, agent } = input;
  // The one place the conversation reads the catalog: its agent's spec, and a tool by name (its own, then its
  // MCP servers'; without servers MCP asks Temporal for nothing, so old histories replay).
  const agentSpec = catalog.agent(agent);
  const kernel = agentSpec.kernel;
  const mcp = new McpTools(input.mcpServers, mcpPorts(input));
  const findAny = (name: string) => catalog.findTool(agent, name) ?? mcp.find(name);

  const activities = sessionActivities(input.settings);
  const carried = takeOver(input, kernel);
  const events = new EventLog((batch) => activities.bookkeeping.record({ conversationId, userId, ...batch }), carried.rejectedSignals);
  const pending = new PendingItems({
    record: (event) => events.event(event),
    setWaiting: (waiting) => upsertSearchAttributes([{ key: WAITING_KEY, value: waiting }]),
    toolOf: (tool) => findAny(tool),
    carriedOpen: carried.openItems,
    carriedClosed: carried.closed,
    kindOf: (kind) => catalog.pendingKind(kind),
  });
  const agentState = new AgentState({
    kernel,
    agent,
    state: carried.agentState,
    ...(agentSpec.events ? { declaredEvents: agentSpec.events } : {}),
    pending,
    events,
    newId: uuid4,
    logError: (message, attributes) => log.error(message, attributes),
    // runs recorded before snapshots were kept replay without them
    snapshot: (messageId, state) => {
      if (patched(AGENT_STATE_SNAPSHOT)) events.event(agentStateEvent(messageId, state));
    },
  });
  const children: ChildRuns = new ChildRuns(input, () => loop.turns);
  const compaction = new Compaction(activities, input);
  const loop = new TurnLoop(
    turnPorts({ input, tools: agentSpec.tools, findTool: findAny, activities, mcp, children, pending, events, agentState, compaction }),
    carried,
  );
  const session: Session = {
    catalog,
    input,
    kernel,
    activities,
    events,
    pending,
    agentState,
    loop,
    children,
    compaction,
    moves: { moving: false },
  };

  // The handlers in the order they were always set: buffered messages reach them in that order.
  handleMcpQuestions(mcp, { loop, pending, events });
  handleDecisions(session);
  handleTurns(session);
  handleStop(session);
  handleQueries(session);
  handleBranches(session);

  loop.idleDetails();
  pending.syncWaiting();
  await continueWhenDue(session);
}
