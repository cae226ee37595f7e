// Which row shows a turn's versions. A regenerate answers again from the user message, so the versions begin at
// the turn's first reply; for a lookup that is a step that only asked for tools, with no words to compare. Its
// versions show on the answer that follows it in the same turn, the row a person reads, and switching from
// there moves to the version through that first reply (the server goes on to that branch's newest message).
import type { ConversationView, Siblings } from './types.ts';

export function versionRows(messages: ConversationView['messages']): Map<string, Siblings> {
  const rows = new Map<string, Siblings>();
  // a wordless step's versions, waiting for the turn's answer; left on the step when the turn has none
  let carried: { from: string; siblings: Siblings } | undefined;
  const leave = () => {
    if (carried) rows.set(carried.from, carried.siblings);
    carried = undefined;
  };
  for (const message of messages) {
    if (message.role === 'tool') continue;
    if (message.role === 'user' || message.siblings) leave();
    if (message.role === 'assistant' && !message.text) {
      if (message.siblings) carried = { from: message.id, siblings: message.siblings };
      continue;
    }
    const siblings = message.siblings ?? carried?.siblings;
    carried = undefined;
    if (siblings) rows.set(message.id, siblings);
  }
  leave();
  return rows;
}
