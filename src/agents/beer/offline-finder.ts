// The offline model's grounded website summary: it says plainly that no web search was made. It is cached
// like any other summary, so the cache behaves the same with and without a key.
import type { OfflineTask } from '../../model/offline-types.ts';

const field = (prompt: string, name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(prompt)?.[1]?.trim();

export const webSummaryOffline: OfflineTask = (request) => {
  const name = field(request.prompt, 'Name') ?? 'this brewery';
  const url = field(request.prompt, 'Website') ?? 'its website';
  const type = field(request.prompt, 'Type');
  const kind = type && type !== 'unknown' ? `a ${type} brewery` : 'a brewery';
  return {
    // in a person's words: what the deployment lacks, not the name of the setting an operator would change
    text: `Offline summary: this deployment runs without a model key, so no web search was made. ${name} is ${kind}; see ${url} for its beers, taproom and events.`,
    grounding: { queries: [], sources: [] },
  };
};
