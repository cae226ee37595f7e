// System prompts live in prompts/<agent>.txt so they can be read and changed without touching code.
import { readFile } from 'node:fs/promises';
import { AGENTS } from '../shared/messages.ts';
import type { AgentName } from '../shared/messages.ts';

const PROMPTS_DIR = new URL('../../prompts/', import.meta.url);
const cache = new Map<AgentName, Promise<string>>();

export function loadPrompt(agent: AgentName): Promise<string> {
  // the name becomes a path: only the known agents may reach the file system
  if (!AGENTS.includes(agent)) return Promise.reject(new Error(`Unknown agent "${String(agent)}"`));
  let prompt = cache.get(agent);
  if (!prompt) {
    prompt = readFile(new URL(`${agent}.txt`, PROMPTS_DIR), 'utf8').then((text) => text.trim());
    // a failed read is not remembered, so a fixed file is picked up on the next call
    prompt.catch(() => cache.delete(agent));
    cache.set(agent, prompt);
  }
  return prompt;
}
