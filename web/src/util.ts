import { useEffect, useState } from 'react';

/** The current time, ticking every `everyMs` while mounted: for countdowns. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

export function formatRemaining(ms: number): string {
  if (ms <= 0) return 'expired';
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h ${m % 60} min` : `${Math.floor(h / 24)} days`;
}

export const asText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);

export function shortJson(value: unknown, max = 80): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Drafts survive a reload or a failed send: nothing typed is lost. */
export const drafts = {
  get: (key: string) => sessionStorage.getItem(`brigade.draft.${key}`) ?? '',
  set: (key: string, text: string) =>
    text ? sessionStorage.setItem(`brigade.draft.${key}`, text) : sessionStorage.removeItem(`brigade.draft.${key}`),
};
