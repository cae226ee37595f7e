// A first message chosen on the home page (a tile's prompt), handed to the conversation page that sends it.
const waiting = new Map<string, string>();

export const outbox = {
  put: (conversationId: string, text: string) => void waiting.set(conversationId, text),
  /** the message, once: a second mount of the page does not send it again */
  take: (conversationId: string): string | undefined => {
    const text = waiting.get(conversationId);
    waiting.delete(conversationId);
    return text;
  },
};
