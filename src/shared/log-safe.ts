// What a log line may say about a failure. A provider's, a tool's or an MCP server's error message can quote
// whatever it was handed (a customer's e-mail, a message's text), and logs are kept, shipped and read more
// widely than the sealed history, which keeps the message (as the user's reply does). So a failure is logged by
// what kind of failure it is, never by its words: the error's class, its failure type, an HTTP status, a code,
// whether a retry may help, and the same for its causes. Ids go beside it, as the caller's own attributes.
// Pure (no I/O, no Temporal imports): workflows, activities, the API and the worker's log sink share it.

/** A token that is a name, a type or a code (`ModelCallError`, `ECONNREFUSED`, `23505`), not free text. */
const TOKEN = /^[A-Za-z0-9_.:-]{1,64}$/;
const CAUSES = 4;

const token = (value: unknown): string | undefined =>
  (typeof value === 'string' && TOKEN.test(value)) || (typeof value === 'number' && Number.isInteger(value)) ? String(value) : undefined;

function statusOf(error: Record<string, unknown>): string | undefined {
  const direct = token(error.status) ?? token(error.statusCode);
  if (direct) return direct;
  // an ApplicationFailure of a model call carries its HTTP status in its details (src/activities/model-failure.ts)
  const details = Array.isArray(error.details) ? error.details : [];
  for (const detail of details) {
    const status = detail && typeof detail === 'object' ? token((detail as Record<string, unknown>).status) : undefined;
    if (status) return status;
  }
  return undefined;
}

function one(error: unknown): string {
  if (!(error instanceof Error)) {
    // a thrown string or value is somebody's text: only its kind is said
    return error === null ? 'null' : typeof error === 'object' ? 'non-error object' : `thrown ${typeof error}`;
  }
  const fields = error as unknown as Record<string, unknown>;
  const name = token(error.name) ?? token(error.constructor?.name) ?? 'Error';
  const parts = [name];
  const type = token(fields.type);
  if (type && type !== name) parts.push(`type=${type}`);
  const status = statusOf(fields);
  if (status) parts.push(`status=${status}`);
  const code = token(fields.code);
  if (code) parts.push(`code=${code}`);
  if (fields.nonRetryable === true) parts.push('nonRetryable');
  return parts.join(' ');
}

/**
 * The failure as a log may say it: `ActivityFailure <- ApplicationFailure type=ModelCallError status=400
 * nonRetryable`. Its message, stack and details other than a status never appear.
 */
export function describeError(error: unknown): string {
  const chain = [one(error)];
  let current: unknown = error;
  for (let depth = 0; depth < CAUSES && current instanceof Error && current.cause !== undefined; depth++) {
    current = current.cause;
    chain.push(one(current));
  }
  return chain.join(' <- ');
}

/**
 * A log entry's attributes with every error in them replaced by its description: for sinks that are handed
 * errors by code that is not ours (the Temporal SDK logs a failed activity with the error itself).
 */
export function safeLogMeta(meta: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(meta)) {
    if (value instanceof Error) (copy ??= { ...meta })[key] = describeError(value);
  }
  return copy ?? meta;
}
