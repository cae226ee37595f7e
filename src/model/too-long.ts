// A provider's answer that the request is longer than its window: Gemini's 400 INVALID_ARGUMENT "The input token
// count (...) exceeds the maximum number of tokens allowed", OpenAI's 400 context_length_exceeded, Anthropic's 400
// "prompt is too long". Asking the same again cannot succeed; asking with a smaller window can (model-step.ts).
import { ModelCallError } from './types.ts';

const TOO_LONG =
  /exceeds the maximum number of tokens|input token count|context_length_exceeded|maximum context length|prompt is too long/i;

export function isContextTooLong(error: unknown): boolean {
  return error instanceof ModelCallError && error.status === 400 && TOO_LONG.test(error.message);
}
