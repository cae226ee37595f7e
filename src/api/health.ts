import express from 'express';
import type pg from 'pg';

const CHECK_TIMEOUT_MS = 2_000;

export interface HealthDeps {
  pool: pg.Pool;
  /** Resolves when Temporal answers; see temporalCheck(). */
  checkTemporal: () => Promise<void>;
  timeoutMs?: number;
  /** where a failing check's reason goes: the log, never the answer */
  log?: (line: string) => void;
}

/**
 * `/healthz`: the process is alive (no dependency checked, so a restart is never triggered by a
 * database outage). `/readyz`: PostgreSQL and Temporal answer now; 503 names each failing check.
 * Both answer anyone, so a failure's reason (hosts, addresses, driver messages) goes to the log only.
 */
export function healthRoutes({ pool, checkTemporal, timeoutMs = CHECK_TIMEOUT_MS, log = console.error }: HealthDeps): express.Router {
  const router = express.Router();
  router.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  router.get('/readyz', async (_req, res) => {
    const checks = {
      postgres: () => pool.query('SELECT 1').then(() => undefined),
      temporal: checkTemporal,
    };
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => [name, await outcome(check, timeoutMs)] as const),
    );
    const failed = results.filter(([, result]) => result !== 'ok');
    for (const [name, reason] of failed) log(`readyz: ${name} failing: ${reason}`);
    const body = {
      status: failed.length === 0 ? 'ready' : 'unavailable',
      ...Object.fromEntries(results.map(([name, result]) => [name, result === 'ok' ? 'ok' : 'failing'])),
    };
    res.status(failed.length === 0 ? 200 : 503).json(body);
  });
  return router;
}

async function outcome(check: () => Promise<void>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    return error instanceof Error && error.message ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

/** A Temporal readiness check over a client connection (`connection.workflowService`). */
export function temporalCheck(connection: { workflowService: { getSystemInfo(request: object): Promise<unknown> } }): () => Promise<void> {
  return async () => {
    await connection.workflowService.getSystemInfo({});
  };
}
