// Prompts live in prompts/<agent>/<name>.txt so they can be read and changed without touching code: each
// agent's system prompt is system.txt, and its task prompts (SQL generation, the save pipeline's steps)
// sit beside it. An agent may keep them elsewhere (AgentServer.prompts: a test agent's own folder). One
// loader for all of them, each file read once.
import { readFile } from 'node:fs/promises';
import type { AgentName } from '../shared/messages.ts';

const PROMPTS_DIR = new URL('../../prompts/', import.meta.url);
/** names become a path: only plain names reach the file system */
const NAME = /^[a-z][a-z0-9_]*$/;
const AGENT = /^[a-z][a-z0-9_-]*$/;
const cache = new Map<string, Promise<string>>();

const folder = (dir: URL) => new URL(dir.href.endsWith('/') ? dir.href : `${dir.href}/`);

/** prompts/<agent>/<name>.txt (or `<dir>/<name>.txt`) as it is written (templates keep their whitespace). */
export function readPrompt(agent: string, name: string, dir?: URL): Promise<string> {
  if (!AGENT.test(agent)) return Promise.reject(new Error(`Unknown agent "${String(agent)}"`));
  if (!NAME.test(name)) return Promise.reject(new Error(`Bad prompt name "${name}"`));
  const file = new URL(`${name}.txt`, dir ? folder(dir) : new URL(`${agent}/`, PROMPTS_DIR));
  let prompt = cache.get(file.href);
  if (!prompt) {
    prompt = readFile(file, 'utf8');
    // a failed read is not remembered, so a fixed file is picked up on the next call
    prompt.catch(() => cache.delete(file.href));
    cache.set(file.href, prompt);
  }
  return prompt;
}

/** What the system prompts are read for: the catalog's agents, with the folder each keeps its prompts in. */
export interface PromptAgents {
  has(name: string): boolean;
  server(name: string): { prompts?: URL } | undefined;
}

/** Each catalog agent's system prompt (system.txt), trimmed; the same promise each time; others refused. */
export function systemPrompts(agents: PromptAgents): (agent: AgentName) => Promise<string> {
  const prompts = new Map<string, Promise<string>>();
  return (agent) => {
    if (!agents.has(agent)) return Promise.reject(new Error(`Unknown agent "${String(agent)}"`));
    let prompt = prompts.get(agent);
    if (!prompt) {
      prompt = readPrompt(agent, 'system', agents.server(agent)?.prompts).then((text) => text.trim());
      prompt.catch(() => prompts.delete(agent));
      prompts.set(agent, prompt);
    }
    return prompt;
  };
}
