// The model used when no GEMINI_API_KEY is set: deterministic, instant, no I/O, and plain about being offline.
// It reads only the transcript's last message: the user's words become one support tool call (from the fixed
// phrasings the agents teach it, given as a value), tool results become a short summary, anything else gets help text.
import type { ChatMessage } from '../shared/messages.ts';
import { matchIntent, offlinePhrases } from './offline-intents.ts';
import { summariseResult } from './offline-summary.ts';
import { OFFLINE_NAME, OFFLINE_PREFIX, type OfflineAgents, offlineStructured } from './offline-tasks.ts';
import type { ChatModel, ModelReply, ModelRequest } from './types.ts';

export { offlinePhrases } from './offline-intents.ts';

const PREFIX = OFFLINE_PREFIX;
const NAME = OFFLINE_NAME;

export function createOfflineModel(agents: OfflineAgents): ChatModel {
  return {
    name: NAME,
    async generate(request: ModelRequest): Promise<ModelReply> {
      if (request.signal?.aborted) throw request.signal.reason;
      const decided = decide(agents, request);
      const { toolCalls } = decided;
      // a regenerate's answer in other words, so that answering again shows something new
      const text = request.seed && !request.output && decided.text ? `${rewording(request.seed)}${decided.text}` : decided.text;
      for (const piece of pieces(text)) request.onText?.(piece);
      const inputTokens = estimateTokens(request.system + JSON.stringify(request.messages) + JSON.stringify(request.tools));
      const outputTokens = estimateTokens(text + JSON.stringify(toolCalls));
      return {
        text,
        toolCalls,
        usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
        model: NAME,
      };
    },
  };
}

function decide(agents: OfflineAgents, request: ModelRequest): Pick<ModelReply, 'text' | 'toolCalls'> {
  const summarise = (message: ChatMessage) => summariseResult(agents, message);
  if (request.output) {
    const responder = offlineStructured(agents, request.output.name);
    if (!responder) throw new Error(`The offline model cannot answer "${request.output.name}" in JSON`);
    return { text: responder(request), toolCalls: [] };
  }
  const last = request.messages.at(-1);
  const tools = new Set(request.tools.map((tool) => tool.name));

  if (last?.role === 'tool') {
    const results = trailingToolMessages(request.messages);
    // a source that could not be reached: the result says why, once; the reply says what the person can do
    if (results.every(unreachable))
      return { text: `${PREFIX}That did not work this time; nothing was done. You can try again.`, toolCalls: [] };
    const lines = results.map(summarise);
    return { text: PREFIX + lines.join('\n'), toolCalls: [] };
  }

  if (last?.role === 'user') {
    const intent = matchIntent(agents, last.text, tools);
    if (intent) {
      // the call is shown in words with its arguments; a reply naming the tool would only repeat it in code
      return { text: '', toolCalls: [intent] };
    }
    // A message that answered an open item ("yes, Stone Brewing") enters the transcript after the results
    // it led to: read those results rather than the answer.
    // A call Stop ended was answered by nothing the person said: their next message is a new request, and the
    // stopped call's words (meant for a model: "ran as a workflow of its own") are not read to them.
    const answered = trailingToolMessages(request.messages.slice(0, -1)).filter((message) => !stoppedByStop(message));
    if (answered.length) return { text: PREFIX + answered.map(summarise).join('\n'), toolCalls: [] };
    return { text: help(agents, tools, last.text), toolCalls: [] };
  }
  return { text: help(agents, tools, last?.text ?? ''), toolCalls: [] };
}

/** The results answering the model's last step: every tool message after the last non-tool one. */
function stoppedByStop(message: ChatMessage): boolean {
  const result = message.result;
  return typeof result === 'object' && result !== null && (result as { status?: unknown }).status === 'stopped';
}

function trailingToolMessages(messages: ChatMessage[]): ChatMessage[] {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role === 'tool') start -= 1;
  return messages.slice(start);
}

function help(agents: OfflineAgents, tools: ReadonlySet<string>, said: string): string {
  const phrases = offlinePhrases(agents).filter((phrase) => tools.has(phrase.tool));
  // said to a person: the deployment's state in words, not the name of the setting that changes it
  const intro = `${PREFIX}This is the offline model: this deployment runs without a model key, so no real model is answering.`;
  if (phrases.length === 0) {
    const echo = said.length > 200 ? `${said.slice(0, 200)}…` : said;
    return echo ? `${intro} You said: "${echo}"` : intro;
  }
  const lines = phrases.map((phrase) => `- ${phrase.examples.map((example) => `"${example}"`).join(' or ')}`);
  return `${intro} It understands these phrasings:\n${lines.join('\n')}`;
}

const REWORDINGS = [
  'Said another way: ',
  'Once more, differently: ',
  'Another take: ',
  'To put it differently: ',
  'Again, in other words: ',
];

/** The opening of a regenerated answer: one of a few, picked by the seed (the same on a retry). */
function rewording(seed: string): string {
  let hash = 0;
  for (const char of seed) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return REWORDINGS[hash % REWORDINGS.length]!;
}

/** A few word-aligned pieces, so the offline model exercises the same streaming path as Gemini. */
function pieces(text: string, count = 3): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const size = Math.max(1, Math.ceil(words.length / count));
  const out: string[] = [];
  for (let start = 0; start < words.length; start += size) out.push(words.slice(start, start + size).join(''));
  return out;
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** A result that failed because a source could not be reached (the tool's error says so), not a refusal. */
function unreachable(message: ChatMessage): boolean {
  const result = message.result as { error?: unknown } | undefined;
  const error = typeof result?.error === 'string' ? result.error : '';
  return /could not be reached|unreachable|is unavailable|timed out|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNRESET|closed before an answer/i.test(
    error,
  );
}
