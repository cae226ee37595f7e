// What a conversation's handlers share: its input, its books (events, pending items, a stateful agent's state),
// the turn loop and the child workflows it runs; and the conversation's state as the state query shows it.
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import type { AgentKernel } from '../shared/agent-kernel.ts';
import type { ChatSessionInput, ConversationState } from '../shared/messages.ts';
import type { AgentState } from './agent-state.ts';
import type { ChildRuns } from './child-runs.ts';
import type { EventLog } from './event-log.ts';
import type { PendingItems } from './pending-items.ts';
import type { SessionActivities } from './session-activities.ts';
import type { TurnLoop } from './turn-loop.ts';
import type { Compaction } from './compaction.ts';

/** Whether a branch move is under way (branch-handlers.ts): no other turn, move or message starts meanwhile. */
export interface BranchMoves {
  moving: boolean;
}

export interface Session {
  catalog: AgentCatalog;
  input: ChatSessionInput;
  kernel: AgentKernel | undefined;
  activities: SessionActivities;
  events: EventLog;
  pending: PendingItems;
  agentState: AgentState;
  loop: TurnLoop;
  children: ChildRuns;
  compaction: Compaction;
  moves: BranchMoves;
}

export function conversationState({ loop, pending, events, kernel, agentState }: Session): ConversationState {
  return {
    status: loop.status(),
    pending: pending.items(),
    turns: loop.turns,
    usage: loop.usage,
    rejectedSignals: events.rejectedSignals,
    ...(kernel ? { agentState: agentState.view() } : {}),
    ...(loop.budgetRaises ? { budgetRaises: loop.budgetRaises } : {}),
    ...(loop.held ? { held: loop.held } : {}),
  };
}
