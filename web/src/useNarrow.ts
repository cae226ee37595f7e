import { useSyncExternalStore } from 'react';

// The width at which the list becomes a drawer and a side panel joins the transcript (styles.css agrees).
const NARROW = '(max-width: 800px)';

export function useNarrow(): boolean {
  return useSyncExternalStore(
    (listener) => {
      const query = window.matchMedia(NARROW);
      query.addEventListener('change', listener);
      return () => query.removeEventListener('change', listener);
    },
    () => window.matchMedia(NARROW).matches,
  );
}
