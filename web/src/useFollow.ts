// A view that follows the conversation: it opens at the pending item or at the end, sticks to the newest
// content while the reader is near the bottom (and offers "New messages ↓" when not), keeps the sticky
// composer from covering anything (scroll-padding the size of the composer), and moves focus to a new
// pending card or to what a decision did.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';

const NEAR_PX = 160;

export function useFollow({ ready, content, pendingIds }: { ready: boolean; content: unknown[]; pendingIds: string[] }) {
  const endRef = useRef<HTMLDivElement>(null);
  const composerRef = useRef<HTMLFormElement>(null);
  const stick = useRef(true);
  const opened = useRef(false);
  const seenPending = useRef(new Set<string>());
  const decided = useRef<string>(undefined);
  const [unseen, setUnseen] = useState(false);

  const composerHeight = () => composerRef.current?.getBoundingClientRect().height ?? 0;

  /** the end of the conversation (after any pending card) is within reach of the visible area above the composer */
  const nearEnd = useCallback(() => {
    const end = endRef.current;
    if (!end) return true;
    return end.getBoundingClientRect().top <= window.innerHeight - composerHeight() + NEAR_PX;
  }, []);

  const toEnd = useCallback(() => {
    const end = endRef.current;
    if (!end) return;
    // the newest content's end, just above the composer; a message taller than the view shows from its start
    end.scrollIntoView({ block: 'end' });
    const last = end.previousElementSibling?.matches('.pending') ? end.previousElementSibling : end.parentElement?.querySelector('.transcript > li:last-child');
    if (last && last.getBoundingClientRect().top < 0) last.scrollIntoView({ block: 'start' });
    stick.current = true;
    setUnseen(false);
  }, []);

  /** shows a pending card whole when it fits, from its top when it does not, and gives it the focus */
  const toPending = useCallback((id: string, focus: boolean) => {
    const card = document.querySelector<HTMLElement>(`[data-pending-card="${CSS.escape(id)}"]`);
    if (!card) return false;
    const room = window.innerHeight - composerHeight();
    card.scrollIntoView({ block: card.getBoundingClientRect().height <= room ? 'end' : 'start' });
    if (focus) {
      const heading = card.querySelector<HTMLElement>('h2, h3') ?? card;
      if (!heading.hasAttribute('tabindex')) heading.tabIndex = -1;
      const active = document.activeElement as HTMLTextAreaElement | null;
      // never take the focus from someone typing a message
      if (!(active?.id === 'composer-text' && active.value)) heading.focus({ preventScroll: true });
    }
    return true;
  }, []);

  // scroll-padding the composer's height: whatever scrolls into view (a focused field too) stays above it;
  // measured before the first scroll below (layout effects run in order)
  useLayoutEffect(() => {
    const form = composerRef.current;
    const root = document.documentElement;
    if (!form) return;
    const set = () => root.style.setProperty('--composer-h', `${Math.ceil(form.getBoundingClientRect().height)}px`);
    set();
    const observer = new ResizeObserver(set);
    observer.observe(form);
    return () => {
      observer.disconnect();
      root.style.removeProperty('--composer-h');
    };
  }, [ready]);

  useEffect(() => {
    const onScroll = () => {
      stick.current = nearEnd();
      if (stick.current) setUnseen(false);
    };
    window.addEventListener('scroll', onScroll, { passive: true });
    return () => window.removeEventListener('scroll', onScroll);
  }, [nearEnd]);

  // the page changing size on its own (a header line, an image, a side panel loading) keeps a reader who
  // follows at the end
  useEffect(() => {
    if (!ready) return;
    let height = document.body.scrollHeight;
    const observer = new ResizeObserver(() => {
      const next = document.body.scrollHeight;
      if (next === height) return;
      height = next;
      if (stick.current && opened.current) toEnd();
    });
    observer.observe(document.body);
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
    if (decided.current) {
      const record = document.querySelector<HTMLElement>(`[data-pending-id="${CSS.escape(decided.current)}"]`) ?? document.querySelector<HTMLElement>('.transcript > li:last-child');
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
    endRef,
    composerRef,
    unseen,
    toEnd,
    /** the person just sent: follow the reply whatever the scroll position */
    stickNow: useCallback(() => {
      stick.current = true;
      setUnseen(false);
    }, []),
    /** after a decision on this item, its record (or the newest message) takes the focus */
    focusAfterDecision: useCallback((pendingId: string) => {
      decided.current = pendingId;
    }, []),
  };
}
