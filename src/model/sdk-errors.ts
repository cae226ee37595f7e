// Sorts what the OpenAI and Anthropic SDKs throw into what a retry can fix and what it cannot, as
// gemini-errors.ts does for Gemini: 408, 409 (a lock), 429, 5xx (Anthropic's 529 "overloaded" too) and the network
// are retryable; other 4xx, a refused or malformed reply and a timeout are not. Both SDKs are generated
// alike (APIError with `status`, APIConnectionError, APIConnectionTimeoutError), so one mapper reads both;
// the SDKs themselves retry nothing (maxRetries: 0): Temporal's activity retry policy owns attempts.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { chainText, networkCode } from './gemini-errors.ts';
import { ModelTimedOut, unansweredText } from './stream-pacing.ts';
import { ModelCallError } from './types.ts';

export interface SdkErrorContext {
  /** the provider's name, as people read it: OpenAI, Anthropic */
  provider: string;
  apiKey: string;
  timeoutMs: number;
}

// Error types a stream may carry in an `error` event after the HTTP 200 (no status then).
const RETRYABLE_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'server_error', 'timeout_error']);

export function toSdkError(error: unknown, context: SdkErrorContext): ModelCallError {
  if (error instanceof ModelCallError) return error;
  const { provider } = context;
  const secret = context.apiKey.length >= 8 ? context.apiKey : undefined;
  const redact = (text: string) => (secret ? text.split(secret).join('[redacted]') : text);
  const cause = secret && chainText(error).includes(secret) ? undefined : error;
  if (!(error instanceof Error))
    return new ModelCallError(redact(`${provider} call failed: ${String(error)}`), { retryable: false, cause });

  // the SDKs' classes keep the name 'Error': told apart by class. A caller's signal (a timeout, a cancelled
  // activity) ends the call as the SDK's own timeout does.
  const timedOut = error instanceof OpenAI.APIConnectionTimeoutError || error instanceof Anthropic.APIConnectionTimeoutError;
  const aborted = error instanceof OpenAI.APIUserAbortError || error instanceof Anthropic.APIUserAbortError;
  if (timedOut || aborted || error.name === 'TimeoutError' || error.name === 'AbortError') {
    return new ModelTimedOut(unansweredText(context.timeoutMs));
  }
  if (error instanceof OpenAI.APIConnectionError || error instanceof Anthropic.APIConnectionError) {
    return new ModelCallError(redact(`Network error talking to ${provider} (${networkCode(error.cause) ?? 'connection failed'})`), {
      retryable: true,
      cause,
    });
  }
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') {
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return new ModelCallError(redact(`${provider} API error ${status}: ${describe(error)}`), { status, retryable, cause });
  }
  const type = errorType(error);
  if (type) {
    return new ModelCallError(redact(`${provider} stream error (${type}): ${describe(error)}`), {
      retryable: RETRYABLE_TYPES.has(type),
      cause,
    });
  }
  const network = networkCode(error);
  if (network) return new ModelCallError(redact(`Network error talking to ${provider} (${network})`), { retryable: true, cause });
  return new ModelCallError(redact(`${provider} call failed: ${error.message.slice(0, 500)}`), { retryable: false, cause });
}

/** The body's own message when the SDK kept it (error.error.message or error.error.error.message). */
function describe(error: Error): string {
  const body = (error as { error?: { message?: unknown; error?: { message?: unknown } } }).error;
  const text =
    typeof body?.message === 'string' ? body.message : typeof body?.error?.message === 'string' ? body.error.message : error.message;
  return text.slice(0, 500);
}

function errorType(error: Error): string | undefined {
  const body = (error as { error?: { type?: unknown; error?: { type?: unknown } } }).error;
  const type = body?.error?.type ?? body?.type ?? (error as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}
