// What the model calls an MCP tool: `<server>__<tool>`, made a valid Gemini function name (letters, digits,
// `_`, `.`, `-`; at most 64 characters). A name that had to change (too long, or characters replaced) keeps
// its start and ends with a hash of the original, so it is stable across lists and workers, and two names
// that differ only in what was cut or replaced stay distinct.
import { createHash } from 'node:crypto';

export const MAX_NAME = 64;

export function exposedName(server: string, tool: string): string {
  const full = `${server}__${tool}`;
  let name = full.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (!/^[A-Za-z_]/.test(name)) name = `_${name}`;
  if (name === full && name.length <= MAX_NAME) return name;
  const suffix = `_${createHash('sha256').update(full).digest('hex').slice(0, 8)}`;
  return `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`;
}
