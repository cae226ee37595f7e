// Edit, regenerate and branch switch (issue 45): the conversation's leaf moves (an activity: it lives in PostgreSQL,
// so it survives continue-as-new), then an edit or a regenerate runs a turn from there. A turn that runs refuses
// them; a turn parked on a person is left behind: it ends first (the machine's branch-left, which ends it as Stop
// does but in words of its own), which withdraws its items and ends the child runs they belong to (stop.ts,
// child-runs.ts), on the branch it belonged to.
import { setHandler, uuid4 } from '@temporalio/workflow';
import { branchTurnUpdate, switchBranchUpdate } from '../shared/definitions.ts';
import { BranchTurnInput, type ChatMessage, type NewEvent, SwitchBranchInput } from '../shared/messages.ts';
import { describeIssues } from '../shared/tool-spec.ts';
import type { z } from 'zod';
import { fail } from './failure-text.ts';
import { BRANCH_LEFT } from './stop.ts';
import type { Session } from './session.ts';

/** The patch under which a stateful agent's state is kept beside each answer (agent.state events). */
export const AGENT_STATE_SNAPSHOT = 'agent-state-snapshot';

/** The event that keeps a stateful agent's state beside the message it follows. */
export const agentStateEvent = (messageId: string, state: unknown): NewEvent => ({
  key: `agent-state:${messageId}`,
  type: 'agent.state',
  data: { messageId, state },
});

export function handleBranches(session: Session): void {
  const { input, loop, activities, compaction, moves, agentState, kernel, events, pending } = session;
  const validate =
    <S extends z.ZodType>(schema: S) =>
    (raw: unknown) => {
      const parsed = schema.safeParse(raw);
      if (!parsed.success) throw fail('BadInput', `Invalid request: ${describeIssues(parsed.error)}`);
      if (moves.moving || (loop.active && !loop.parked)) throw fail('TurnRunning', 'A turn is running; try again when it ends.');
    };

  /** Leaves the current branch (a parked turn is stopped on it) and moves the leaf. */
  async function move(messageId: string | null, descend: boolean, reason: 'edit' | 'regenerate' | 'switch'): Promise<string | null> {
    moves.moving = true;
    try {
      // a turn parked on a person is stopped on its branch: its items withdrawn, the child runs they belong to ended
      if (loop.leaveBranch()) await loop.waitForEnd();
      pending.withdrawOpen(BRANCH_LEFT);
      const { conversationId, userId } = input;
      const moved = await activities.bookkeeping.moveLeaf({
        conversationId,
        userId,
        messageId,
        descend,
        reason,
        key: uuid4(),
        withState: !!kernel,
      });
      // a stateful agent resumes from the state kept with the new path's last answer (none kept: it stays as it is)
      if (moved.state) agentState.restore(moved.state.value);
      if (events.hasUnsaved()) await events.flush();
      return moved.leafId;
    } finally {
      moves.moving = false;
    }
  }

  setHandler(
    branchTurnUpdate,
    async (request) => {
      await move(request.at, false, request.kind);
      const turn =
        request.kind === 'edit'
          ? loop.receive({ id: uuid4(), role: 'user', text: request.text.trim() })
          : loop.rerun({ id: request.at, role: 'user', text: '' } satisfies ChatMessage);
      const result = await turn;
      compaction.afterTurn();
      return result;
    },
    {
      validator: validate(BranchTurnInput),
      description:
        'An edit ({"kind": "edit", "at": parent id or null, "text"}) or a regenerate ({"kind": "regenerate", "at": user message id}): the turn runs from there; answers like sendMessage.',
    },
  );

  setHandler(switchBranchUpdate, async ({ messageId }) => ({ leafId: await move(messageId, true, 'switch') }), {
    validator: validate(SwitchBranchInput),
    description: 'Makes the branch through {"messageId"} current, at its newest message; answers {"leafId"}.',
  });
}
