import { z } from 'zod';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration as milliseconds, written as `250ms`, `30s`, `5m`, `24h`, `7d` or a bare number of milliseconds. */
export const duration = z.union([z.number(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number') return value;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (!match) {
    ctx.addIssue({ code: 'custom', message: 'must be a duration such as 500ms, 30s, 5m or 24h' });
    return z.NEVER;
  }
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']!);
});
