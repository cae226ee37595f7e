// Turns and what a person asks of them: a message (starts a turn or answers a parked one), Stop, the wake-up
// to move to the current worker version, and the queries that show the conversation.
import { patched, setHandler, uuid4 } from '@temporalio/workflow';
import { agentStateQuery, sendMessageUpdate, stateQuery, stopSignal, stopUpdate, upgradeSignal } from '../shared/definitions.ts';
import { type ChatMessage, SendMessageInput } from '../shared/messages.ts';
import { describeIssues } from '../shared/tool-spec.ts';
import { nameConversation } from './conversation-title.ts';
import { fail } from './failure-text.ts';
import { openItemsSentence } from './pending-items.ts';
import { type Session, conversationState } from './session.ts';

/** The patch under which a stopped first turn names its conversation too. */
const TITLE_AFTER_STOP = 'title-after-stopped-first-turn';

export function handleTurns(session: Session): void {
  const { input, loop } = session;
  setHandler(
    sendMessageUpdate,
    ({ text, pending }) => {
      const message: ChatMessage = { id: uuid4(), role: 'user', text: text.trim() };
      // Only messages that say what to do with open items carry `pending`: runs recorded before it (a
      // message that answered the first item) replay as they went.
      if (pending === 'keep' && loop.active) {
        const held = loop.hold(message);
        return Promise.resolve({ messages: [], pending: session.pending.items(), held });
      }
      if (pending === 'decline' && loop.parked) return loop.decline(message);
      // Only runs started without a title carry autoTitle, so histories recorded before it replay unchanged.
      const first = input.autoTitle === true && loop.turns === 0 && !loop.active;
      const turn = loop.receive(message);
      return turn.then((result) => {
        // A first turn the person stopped is named too, from what they wrote and what streamed before the Stop;
        // runs that did not (recorded before the patch) stay as they were.
        if (first && (!result.stopped || patched(TITLE_AFTER_STOP)))
          void nameConversation(session.activities.titles, input, message.text, result.messages);
        // older turns folded after the answer, not before it
        session.compaction.afterTurn();
        return result;
      });
    },
    {
      validator: (raw) => {
        const parsed = SendMessageInput.safeParse(raw);
        if (!parsed.success) throw fail('BadInput', `Invalid message: ${describeIssues(parsed.error)}`);
        const { pending } = parsed.data;
        if (pending === 'keep' && loop.held)
          throw fail('Conflict', 'A message is already held for when this turn ends; send this one after it.');
        if (pending === 'keep' && loop.active) return;
        if (session.moves.moving || (loop.active && !loop.parked))
          throw fail('TurnRunning', 'A turn is already running; send the message when it ends.');
        // A message never decides an item by accident: one that reads as an answer to every open item (beer's
        // "yes, <name>", its contract's answer) answers them; any other must say whether it declines them or waits.
        const open = session.pending.items().filter((item) => session.catalog.pendingKind(item.kind)?.scope === 'turn');
        const answered = open.every((item) => session.catalog.pendingKind(item.kind)?.answeredBy?.(item, parsed.data.text) === true);
        if (loop.parked && !pending && !answered)
          throw fail(
            'PendingOpen',
            openItemsSentence(open),
            open.map((item) => ({ field: item.id, message: `${item.kind} of ${item.tool}` })),
          );
      },
      description:
        'A user message: {"text": "...", "pending"?: "decline" | "keep"}; answers with the turn\'s new messages once it ends or waits for a person. While the turn waits for a person, "pending" is needed: "decline" declines every open item (and the reply\'s calls that would ask next) with the text as the reason, "keep" holds the text and sends it as the next turn once this one ends.',
    },
  );
}

export function handleStop({ loop }: Session): void {
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
    // and the run's end (run-end.ts) reads it.
    () => undefined,
    {
      description:
        'Wake this conversation so that it moves to the current worker version: once no turn runs it continues as new there (no payload; any payload is ignored). A conversation already on the current version does nothing.',
    },
  );
}

export function handleQueries(session: Session): void {
  const { kernel, agentState } = session;
  setHandler(stateQuery, () => conversationState(session), {
    description: 'The conversation now: idle, running or waiting, its open items, counters and agent state.',
  });
  // A query adds no command: histories recorded before it replay as they were.
  setHandler(agentStateQuery, () => (kernel ? { agentState: agentState.state } : {}), {
    description: "A stateful agent's own state as this run holds it; what a revival from PostgreSQL starts the new run with.",
  });
}
