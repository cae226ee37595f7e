// What test files use to reach the services that global-setup.ts started for the whole run.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const TEMPLATE_DATABASE = 'brigade_template';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run tests with "npm test", or "node --test --test-global-setup=test/support/global-setup.ts <file>"`,
    );
  }
  return value;
}

function unique(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A new database, already migrated (a copy of the template that global setup migrated once).
 * `url` is the login user's URL; give it to createPool(), which drops to the brigade_app role.
 * `adminUrl` is the same login without a role switch (plain pg, or createPool(url, { role: null })),
 * for fixtures that the app's role may not write.
 */
export async function freshDatabase(): Promise<{ url: string; adminUrl: string; drop(): Promise<void> }> {
  const serverUrl = required('BRIGADE_TEST_PG_ADMIN_URL');
  const name = unique('t');
  await withAdmin(serverUrl, async (client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
        return;
      } catch (error) {
        // 55006: the template is busy (another clone starting); it frees up in milliseconds.
        if ((error as { code?: string }).code !== '55006' || attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  });
  const url = withDatabase(serverUrl, name);
  let dropped = false;
  return {
    url,
    adminUrl: url,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await withAdmin(serverUrl, async (client) => {
        // A pool's end() resolves once its clients are let go, before their connections have closed: FORCE would
        // terminate one mid-close, and that client's error event (no pool listens any more) is an uncaught
        // exception in the test's process. So the connections get a moment to go first; FORCE ends what stays.
        for (let wait = 0; wait < 40; wait++) {
          const { rows } = await client.query<{ open: number }>('SELECT count(*)::int AS open FROM pg_stat_activity WHERE datname = $1', [
            name,
          ]);
          if (rows[0]!.open === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}

async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** host:port of the shared Temporal dev server (namespace `default`, Brigade's search attributes registered). */
export function temporalAddress(): string {
  return required('BRIGADE_TEST_TEMPORAL_ADDRESS');
}

/** The `temporal` CLI the run found (pass it as TEMPORAL_CLI_PATH to a child `npm start`). */
export function temporalCliPath(): string {
  return required('BRIGADE_TEST_TEMPORAL_CLI_PATH');
}

/** Path of the prebuilt workflow bundle: Worker.create({ workflowBundle: { codePath } }) skips webpack. */
export function workflowBundlePath(): string {
  return required('BRIGADE_TEST_BUNDLE_PATH');
}

/** A task queue no other test file polls, so workers of parallel files never steal each other's tasks. */
export function uniqueTaskQueue(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
