// A view that follows the conversation inside its scroller (the transcript scrolls, the page does not): it
// opens at the pending item or at the end, sticks to the newest content while the reader is near the bottom
// (and offers "New messages ↓" when not), and moves focus to a new pending card or to what a decision did.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';

const NEAR_PX = 160;

export function useFollow({ ready, content, pendingIds }: { ready: boolean; content: unknown[]; pendingIds: string[] }) {
  const scrollerRef = useRef<HTMLDivElement>(null);
  const endRef = useRef<HTMLDivElement>(null);
  const composerRef = useRef<HTMLFormElement>(null);
  const stick = useRef(true);
  const opened = useRef(false);
  const seenPending = useRef(new Set<string>());
  const decided = useRef<string>(undefined);
  const [unseen, setUnseen] = useState(false);

  const view = () => scrollerRef.current?.getBoundingClientRect();

  /** the end of the conversation (after any pending card) is within reach of the scroller's visible area */
  const nearEnd = useCallback(() => {
    const end = endRef.current;
    const box = view();
    if (!end || !box) return true;
    return end.getBoundingClientRect().top <= box.bottom + NEAR_PX;
  }, []);

  const toEnd = useCallback(() => {
    const end = endRef.current;
    const scroller = scrollerRef.current;
    if (!end || !scroller) return;
    // the newest content's end; a message taller than the view shows from its start
    scroller.scrollTop = scroller.scrollHeight;
    const last = end.previousElementSibling?.matches('.pending')
      ? end.previousElementSibling
      : scroller.querySelector('.transcript > li:last-child');
    if (last && last.getBoundingClientRect().top < scroller.getBoundingClientRect().top) last.scrollIntoView({ block: 'start' });
    stick.current = true;
    setUnseen(false);
  }, []);

  /** shows a pending card whole when it fits, from its top when it does not, and gives it the focus */
  const toPending = useCallback((id: string, focus: boolean) => {
    const card = document.querySelector<HTMLElement>(`[data-pending-card="${CSS.escape(id)}"]`);
    const scroller = scrollerRef.current;
    if (!card || !scroller) return false;
    card.scrollIntoView({ block: card.getBoundingClientRect().height <= scroller.clientHeight ? 'end' : 'start' });
    if (focus) {
      const heading = card.querySelector<HTMLElement>('h2, h3') ?? card;
      if (!heading.hasAttribute('tabindex')) heading.tabIndex = -1;
      const active = document.activeElement as HTMLTextAreaElement | null;
      // never take the focus from someone typing a message
      if (!(active?.id === 'composer-text' && active.value)) heading.focus({ preventScroll: true });
    }
    return true;
  }, []);

  useEffect(() => {
    const scroller = scrollerRef.current;
    if (!scroller) return;
    const onScroll = () => {
      stick.current = nearEnd();
      if (stick.current) setUnseen(false);
    };
    scroller.addEventListener('scroll', onScroll, { passive: true });
    return () => scroller.removeEventListener('scroll', onScroll);
  }, [ready, nearEnd]);

  // the content or the scroller changing size on its own (an image, a side panel loading, the composer
  // growing, a phone's keyboard) keeps a reader who follows at the end
  useEffect(() => {
    const scroller = scrollerRef.current;
    if (!ready || !scroller) return;
    const observer = new ResizeObserver(() => {
      if (stick.current && opened.current) toEnd();
    });
    observer.observe(scroller);
    for (const child of Array.from(scroller.children)) observer.observe(child);
    return () => observer.disconnect();
  }, [ready, toEnd]);

  const pendingKey = pendingIds.join(',');
  useLayoutEffect(() => {
    if (!ready) return;
    const fresh = pendingIds.filter((id) => !seenPending.current.has(id));
    for (const id of pendingIds) seenPending.current.add(id);
    if (!opened.current) {
      // a conversation opens at what waits for the person, or at its end
      opened.current = true;
      if (!(pendingIds[0] && toPending(pendingIds[0], true))) toEnd();
      return;
    }
    if (fresh[0]) {
      toPending(fresh[0], true);
      stick.current = true;
      setUnseen(false);
      return;
    }
    if (decided.current && !pendingIds.includes(decided.current)) {
      // the decided card has gone: its record (or the newest message) takes the focus it had
      const record =
        document.querySelector<HTMLElement>(`[data-pending-id="${CSS.escape(decided.current)}"]`) ??
        document.querySelector<HTMLElement>('.transcript > li:last-child');
      decided.current = undefined;
      record?.focus({ preventScroll: true });
      toEnd();
      return;
    }
    if (stick.current) toEnd();
    else setUnseen(true);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ready, pendingKey, ...content]);

  return {
    scrollerRef,
    endRef,
    composerRef,
    unseen,
    toEnd,
    /** the person just sent: follow the reply whatever the scroll position */
    stickNow: useCallback(() => {
      stick.current = true;
      setUnseen(false);
    }, []),
    /** a decision on this item is on its way: once its card goes, its record (or the newest message) takes the focus */
    focusAfterDecision: useCallback((pendingId: string) => {
      decided.current = pendingId;
    }, []),
  };
}
