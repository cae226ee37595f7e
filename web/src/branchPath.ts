// Which of the transcript's entries belong to the current branch (issue 45: a conversation is a tree). The
// transcript keeps every message the events ever told of, of every branch; GET's view is the current branch.
// A message is shown when it is on that branch, or when it came after the last `branch.changed` event (a turn
// running now on the current branch: the view may not have it yet). A pending item's record follows the message
// whose call it belongs to; a progress row follows the message before it. Pure, so it reads the same on every
// render and every load.
import type { Transcript } from './transcript.ts';
import type { ChatMessage } from './types.ts';

export function branchOrder(transcript: Transcript, path: readonly Pick<ChatMessage, 'id'>[]): string[] {
  const { order, branchAt } = transcript;
  // a conversation whose branch never changed is one line: every entry is on it
  if (branchAt === undefined) return order;
  const onPath = new Set(path.map((m) => m.id));
  const shown = new Set<string>();
  const callOwner = new Map<string, string>();
  order.forEach((entry, at) => {
    if (entry.startsWith('pending:') || entry.startsWith('progress:')) return;
    if (onPath.has(entry) || at >= branchAt) shown.add(entry);
    for (const call of transcript.messages[entry]?.toolCalls ?? []) callOwner.set(call.id, entry);
  });
  const out: string[] = [];
  let lastMessageShown = true;
  for (const entry of order) {
    if (entry.startsWith('pending:')) {
      const owner = callOwner.get(transcript.items[entry.slice(8)]?.item.callId ?? '');
      if (owner ? shown.has(owner) : lastMessageShown) out.push(entry);
    } else if (entry.startsWith('progress:')) {
      if (lastMessageShown) out.push(entry);
    } else {
      lastMessageShown = shown.has(entry);
      if (lastMessageShown) out.push(entry);
    }
  }
  return out;
}
