import type pg from 'pg';
import type { Config } from '../config.ts';
import { createWorker } from '../worker.ts';
import { connectTemporalWorker } from './connect.ts';
import type { Lifecycle } from './lifecycle.ts';
import { installTemporalRuntime } from './temporal-runtime.ts';

/**
 * Runs the worker for the life of the process: a worker that stops on its own is a failure, and the
 * process's stop drains it before the connections and services behind it go away.
 */
export async function runWorker(config: Config, address: string, pool: pg.Pool, { onStop, fail }: Pick<Lifecycle, 'onStop' | 'fail'>) {
  installTemporalRuntime(config.LOG_LEVEL);
  const connection = await connectTemporalWorker(address);
  onStop('Temporal worker connection', () => connection.close());
  const worker = await createWorker({ config, connection, pool });
  const running = worker.run();
  running.then(
    () => fail(new Error('The Temporal worker stopped unexpectedly')),
    (error: unknown) => fail(new Error(`The Temporal worker failed: ${(error as Error).message}`)),
  );
  onStop('Temporal worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  });
}
