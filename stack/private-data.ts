// DATA_DIR holds what no other account on the machine should read: the Temporal dev server's history file
// (every conversation in plain text), stored objects (recipe images, files MCP tools answered with), the dev
// token and PostgreSQL's password. Every Brigade process creates files 0600 and folders 0700 (umask 077), and
// at start the tree is tightened once, for files an older version wrote world-readable. PostgreSQL's own
// folder is left to PostgreSQL (it insists on 0700 itself); DATA_DIR keeps the execute bit others need to
// reach it when, as root, PostgreSQL runs as the `postgres` user (traversal, never listing or reading).
import fs from 'node:fs/promises';
import path from 'node:path';

export const PRIVATE_UMASK = 0o077;

/** New files and folders of this process (and the children it starts: the Temporal dev server) are the owner's alone. */
export function privateFiles(): void {
  process.umask(PRIVATE_UMASK);
}

/** Makes DATA_DIR (created when missing) and everything in it unreadable by other accounts. */
export async function privateDataDir(dataDir: string): Promise<void> {
  privateFiles();
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  await tighten(path.resolve(dataDir), true);
}

async function tighten(target: string, top: boolean): Promise<void> {
  const stat = await fs.lstat(target).catch(() => undefined);
  if (!stat || stat.isSymbolicLink()) return;
  // the top folder may keep others' execute bit (traversal for the postgres user), never their read or write
  const keep = top && stat.isDirectory() ? 0o7711 : 0o7700;
  if ((stat.mode & 0o7777 & ~keep) !== 0) await fs.chmod(target, stat.mode & keep).catch(() => undefined);
  if (!stat.isDirectory()) return;
  for (const entry of await fs.readdir(target).catch(() => [] as string[])) {
    if (top && entry === 'postgres') continue;
    await tighten(path.join(target, entry), false);
  }
}
