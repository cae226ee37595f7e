import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { agentRoles } from '../src/agents/registry.ts';
import type { TokenGrant } from '../src/config.ts';

/**
 * Without API_TOKENS, `npm start` still needs a bearer token: one random token kept in
 * `<DATA_DIR>/dev-token` (owner-only), so restarts keep it and a copied curl command keeps working.
 */
export async function loadOrCreateDevToken(dataDir: string): Promise<{ token: string; tokens: Record<string, TokenGrant> }> {
  const file = path.join(dataDir, 'dev-token');
  let token: string;
  try {
    token = (await fs.readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    token = '';
  }
  if (!/^[0-9a-f]{64}$/.test(token)) {
    token = randomBytes(32).toString('hex');
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, `${token}\n`, { mode: 0o600 });
  }
  // A file from an older run may have looser permissions than we would create.
  await fs.chmod(file, 0o600);
  // the one person of a dev install is its operator too: the codec server (temporal workflow show --codec-auth)
  return { token, tokens: { [token]: { user: 'dev', roles: [...agentRoles(), 'operator'] } } };
}
