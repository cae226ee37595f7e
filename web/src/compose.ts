// A card's action (a recipe's "Delete") is a request to the agent: its text goes into the message box for
// the person to read and send, never straight to the agent. An event, so a card needs no route to the page.
const COMPOSE = 'brigade:compose';

export function compose(text: string): void {
  window.dispatchEvent(new CustomEvent(COMPOSE, { detail: text }));
}

/** Calls `write` with each text a card composes; returns the unsubscribe. */
export function onCompose(write: (text: string) => void): () => void {
  const listener = (event: Event) => write(String((event as CustomEvent).detail));
  window.addEventListener(COMPOSE, listener);
  return () => window.removeEventListener(COMPOSE, listener);
}
