// The one way the workflow bundle is built (the image build, the test setup, the bench): webpack from an
// entry that exports the workflows, written to a file a worker loads with workflowBundle.codePath.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../src/telemetry/temporal.ts';

/** The app's workflows: chatSession and the agents' child workflows. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../src/workflows/index.ts', import.meta.url));

export interface BundleOptions {
  /** where to write it */
  outFile: string;
  /** the entry (default src/workflows/index.ts; tests give one that also registers a test agent) */
  workflowsPath?: string;
  /** webpack's chatter goes here; warnings and errors only by default */
  log?: { warn(message: string): void; error(message: string): void };
}

/** The bundle's code, in memory (a versioned worker hashes it for its build id). */
export async function workflowBundleCode({
  workflowsPath = WORKFLOWS_PATH,
  log = console,
}: Omit<BundleOptions, 'outFile'> = {}): Promise<string> {
  // Imported here so that a process that only loads a bundle does not pay for webpack.
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const noop = () => undefined;
  const logger = {
    trace: noop,
    debug: noop,
    info: noop,
    log: noop,
    warn: (message: string) => log.warn(message),
    error: (message: string) => log.error(message),
  };
  // the tracing interceptors go into every bundle, so one bundle serves with tracing on or off
  const { code } = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES, logger });
  return code;
}

/** Bundles the workflows into `outFile`; answers its size in bytes. */
export async function bundleWorkflows({ outFile, workflowsPath = WORKFLOWS_PATH, log = console }: BundleOptions): Promise<number> {
  const code = await workflowBundleCode({ workflowsPath, log });
  await fs.mkdir(path.dirname(path.resolve(outFile)), { recursive: true });
  await fs.writeFile(outFile, code);
  return code.length;
}
