// Sorts what the Gemini SDK throws into what a retry can fix (429, 5xx, the network) and what it cannot (other
// 4xx, a refused or malformed reply, a timeout: the same request would wait as long again). Temporal reads `retryable`; the SDK itself retries nothing.
import { ApiError } from '@google/genai';
import { ModelTimedOut, unansweredText } from './stream-pacing.ts';
import { ModelCallError } from './types.ts';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const NETWORK_MESSAGE = /fetch failed|socket hang up|terminated|other side closed|network|ECONN\w+|timed? ?out/i;

export interface ErrorContext {
  apiKey: string;
  timeoutMs: number;
}

export function toModelCallError(error: unknown, context: ErrorContext): ModelCallError {
  if (error instanceof ModelCallError) return error;
  // Too short a "key" (a test's 'k') would match everywhere; real keys are dozens of characters.
  const secret = context.apiKey.length >= 8 ? context.apiKey : undefined;
  const redact = (text: string) => (secret ? text.split(secret).join('[redacted]') : text);
  // The cause travels into Temporal's failure; keep it only when it cannot leak the key.
  const cause = secret && chainText(error).includes(secret) ? undefined : error;

  if (error instanceof ApiError || (isError(error) && error.name === 'ApiError' && typeof (error as ApiError).status === 'number')) {
    const status = (error as ApiError).status;
    const retryable = status === 408 || status === 429 || status >= 500;
    return new ModelCallError(redact(`Gemini API error ${status}: ${describeApiError(error.message)}`), { status, retryable, cause });
  }

  if (isError(error) && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return new ModelTimedOut(unansweredText(context.timeoutMs));
  }

  const network = networkCode(error);
  if (network) {
    return new ModelCallError(redact(`Network error talking to Gemini (${network})`), { retryable: true, cause });
  }

  const message = isError(error) ? error.message : String(error);
  if (/Incomplete JSON segment/i.test(message)) {
    return new ModelCallError('Gemini closed the stream mid-reply', { retryable: true, cause });
  }
  if (/exception parsing stream chunk/i.test(message)) {
    return new ModelCallError('Gemini sent a malformed stream chunk', { retryable: false, cause });
  }
  return new ModelCallError(redact(`Gemini call failed: ${message}`), { retryable: false, cause });
}

/** The SDK puts the response body (JSON) in the message; the useful part is error.status and error.message. */
function describeApiError(message: string): string {
  const start = message.indexOf('{');
  if (start >= 0) {
    try {
      const body = JSON.parse(message.slice(start)) as { error?: { status?: unknown; message?: unknown } };
      const status = typeof body.error?.status === 'string' ? body.error.status : '';
      const text = typeof body.error?.message === 'string' ? body.error.message : '';
      if (status || text) return [status, text].filter(Boolean).join(' ');
    } catch {
      // not JSON after all: fall through to the raw text
    }
  }
  return message.slice(0, 500);
}

/** A connection-level failure's code or message, looked for along the cause chain (undici nests them). */
export function networkCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth += 1) {
    if (!isError(current)) break;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    const match = NETWORK_MESSAGE.exec(current.message);
    if (match && current.name !== 'ApiError') {
      const inner = networkCode(current.cause);
      return inner ?? match[0];
    }
    current = current.cause;
  }
  return undefined;
}

export function chainText(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth += 1) {
    parts.push(isError(current) ? `${current.message}\n${current.stack ?? ''}` : String(current));
    current = isError(current) ? current.cause : undefined;
  }
  return parts.join('\n');
}

function isError(value: unknown): value is Error {
  return value instanceof Error;
}
