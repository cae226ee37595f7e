// Prompts live in prompts/<agent>/<name>.txt so they can be read and changed without touching code: each
// agent's system prompt is system.txt, and its task prompts (SQL generation, the save pipeline's steps)
// sit beside it. One loader for all of them, each file read once.
import { readFile } from 'node:fs/promises';
import { isAgentName } from '../agents/registry.ts';
import type { AgentName } from '../shared/messages.ts';

const PROMPTS_DIR = new URL('../../prompts/', import.meta.url);
/** Agents whose prompts live elsewhere (a test agent's own folder). */
const elsewhere = new Map<string, URL>();

/** Reads `agent`'s prompts from `dir` instead of prompts/<agent>/ (AgentServer.prompts). */
export function setPromptsFolder(agent: string, dir: URL): void {
  elsewhere.set(agent, new URL(dir.href.endsWith('/') ? dir.href : `${dir.href}/`));
}
const NAME = /^[a-z][a-z0-9_]*$/;
const cache = new Map<string, Promise<string>>();

/** prompts/<agent>/<name>.txt as it is written (templates keep their whitespace). */
export function readPrompt(agent: string, name: string): Promise<string> {
  // the names become a path: only registered agents and plain names may reach the file system
  if (!isAgentName(agent)) return Promise.reject(new Error(`Unknown agent "${String(agent)}"`));
  if (!NAME.test(name)) return Promise.reject(new Error(`Bad prompt name "${name}"`));
  const key = `${agent}/${name}`;
  let prompt = cache.get(key);
  if (!prompt) {
    const dir = elsewhere.get(agent) ?? new URL(`${agent}/`, PROMPTS_DIR);
    prompt = readFile(new URL(`${name}.txt`, dir), 'utf8');
    // a failed read is not remembered, so a fixed file is picked up on the next call
    prompt.catch(() => cache.delete(key));
    cache.set(key, prompt);
  }
  return prompt;
}

const systemPrompts = new Map<string, Promise<string>>();

/** An agent's system prompt, prompts/<agent>/system.txt, trimmed; the same promise each time. */
export function loadPrompt(agent: AgentName): Promise<string> {
  let prompt = systemPrompts.get(agent);
  if (!prompt) {
    prompt = readPrompt(agent, 'system').then((text) => text.trim());
    prompt.catch(() => systemPrompts.delete(agent));
    systemPrompts.set(agent, prompt);
  }
  return prompt;
}
