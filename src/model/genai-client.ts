// One way to make the @google/genai client, for chat and for one-shot tasks alike: the SDK retries nothing
// (Temporal's activity retry policy owns backoff and attempts), the backend and API version are pinned.
import { GoogleGenAI } from '@google/genai';

export interface GenAiOptions {
  apiKey: string;
  /** another Gemini-compatible endpoint (a proxy, or the tests' fake server) */
  baseUrl?: string;
  /** per request, body included; an unanswered one-shot call would otherwise hold its activity until Temporal's timeout */
  timeoutMs?: number;
}

export function createGenAiClient(opts: GenAiOptions): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: opts.apiKey,
    // explicit, so GOOGLE_GENAI_USE_VERTEXAI in the environment cannot switch the backend
    vertexai: false,
    // v1beta: parametersJsonSchema, responseJsonSchema and the newest fields are documented there; SDK 3.x
    // defaults to v1. Pinned here, so GOOGLE_GENAI_API_VERSION cannot move it either.
    apiVersion: 'v1beta',
    httpOptions: {
      ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}),
      // "attempts: 1" is the SDK's documented "no retries"
      retryOptions: { attempts: 1 },
    },
  });
}
