// Worker Deployment Versioning: which version a worker is, and making it the deployment's current one.
// A version is the deployment's name and a build id; new workflow code is a new build id (a hash of the
// bundle), so a deploy can never run a conversation's history against code it was not written with.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NativeConnection, WorkerDeploymentOptions } from '@temporalio/worker';
import type { Config } from './config.ts';

type VersioningSettings = Pick<Config, 'WORKER_DEPLOYMENT_NAME' | 'WORKER_BUILD_ID' | 'WORKER_VERSIONING_BEHAVIOR' | 'WORKER_SET_CURRENT'>;

export interface WorkerVersion {
  deploymentName: string;
  buildId: string;
}

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The package's version and the bundle's hash: the same code gives the same build id on every machine. */
export function buildIdOf(bundleCode: string, version = PACKAGE_VERSION): string {
  return `${version}-${createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}

/** The worker's deployment options, or undefined for an unversioned worker. */
export function deploymentOptions(config: VersioningSettings, bundleCode: () => string): WorkerDeploymentOptions | undefined {
  if (!config.WORKER_DEPLOYMENT_NAME) return undefined;
  return {
    useWorkerVersioning: true,
    version: { deploymentName: config.WORKER_DEPLOYMENT_NAME, buildId: config.WORKER_BUILD_ID ?? buildIdOf(bundleCode()) },
    defaultVersioningBehavior: config.WORKER_VERSIONING_BEHAVIOR === 'pinned' ? 'PINNED' : 'AUTO_UPGRADE',
  };
}

export class PromotionError extends Error {
  override name = 'PromotionError';
}

/**
 * Once the worker polls (the server learns of a version only then), makes its version current as
 * WORKER_SET_CURRENT says. Answers what it did, for the start-up log.
 */
export async function promoteWhenPolling(
  connection: Pick<NativeConnection, 'workflowService'>,
  namespace: string,
  version: WorkerVersion,
  mode: VersioningSettings['WORKER_SET_CURRENT'],
  { timeoutMs = 30_000, signal }: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<'current' | 'already current' | 'left as it is'> {
  if (mode === 'never') return 'left as it is';
  const service = connection.workflowService;
  const deadline = Date.now() + timeoutMs;
  let lastError = 'the version did not appear';
  while (Date.now() < deadline && !signal?.aborted) {
    try {
      const { workerDeploymentInfo: info, conflictToken } = await service.describeWorkerDeployment({
        namespace,
        deploymentName: version.deploymentName,
      });
      const current = info?.routingConfig?.currentDeploymentVersion;
      if (current?.buildId === version.buildId) return 'already current';
      if (mode === 'if-none' && current?.buildId) return 'left as it is';
      const known = info?.versionSummaries?.some((summary) => summary.deploymentVersion?.buildId === version.buildId);
      if (known) {
        await service.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: version.deploymentName,
          buildId: version.buildId,
          identity: `brigade worker ${version.buildId}`,
          conflictToken,
        });
        return 'current';
      }
    } catch (error) {
      // NotFound until the first poll creates the deployment; a conflict means another worker moved it: look again.
      lastError = (error as Error).message;
    }
    await sleep(250);
  }
  throw new PromotionError(
    `Could not make worker version ${version.deploymentName}:${version.buildId} current within ${timeoutMs / 1000} s (${lastError}). ` +
      'Set it by hand: temporal worker deployment set-current-version --deployment-name ' +
      `${version.deploymentName} --build-id ${version.buildId}`,
  );
}
