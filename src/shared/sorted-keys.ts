// JSON with its object keys in one order, whatever order they were made in. A value read back from PostgreSQL's
// jsonb has its keys in jsonb's order (shorter first), the same value fresh from a tool in the order the tool
// wrote them: sent to a model as they are, the same transcript would be different bytes from one call to the
// next, and a provider's cache of the repeated prefix would miss from that point on.

/** A copy of `value` whose objects, at every depth, have their keys sorted (by UTF-16 code units). */
export function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return sorted as T;
}
