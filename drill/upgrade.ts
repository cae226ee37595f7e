// The upgrade drill (`npm run drill -- upgrade`): the deploy procedure of docs/operations.md#upgrades, run as an
// operator runs it, under conversations that a nondeterministic change would kill. Version 1 runs with
// conversations parked on an approval, a save approval, a brewery confirmation (a child workflow waiting), a
// save pipeline held mid-way, and one idle; version 2 (drill/workflows-v2.ts: its chatSession starts with a
// timer, so no v1 history replays on it) is deployed beside it, the replay gate refuses it as an in-place
// deploy, and it goes in as a new version by the handbook: switch, wake, drain. Every conversation then takes
// its next decision and message with nothing lost, no workflow task fails, and all of them end up on v2.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflows } from '../stack/bundle-workflows.ts';
import { liveHistories, replayAll } from '../stack/replay-gate.ts';
import { findTemporalBinary } from '../stack/temporal-binary.ts';
import { buildIdOf } from '../src/worker-deployment.ts';
import { DEV_KEY_ID, loadOrCreatePayloadKey } from '../src/protection/data-converter.ts';
import { EncryptionCodec, StaticKeyProvider } from '../src/protection/payload-codec.ts';
import { PersonKeys } from '../src/protection/person-keys.ts';
import pg from 'pg';
import { type DrillCluster, startDrillCluster } from './harness.ts';
import { builtInCatalog } from '../src/agents/catalog.ts';

const run = promisify(execFile);
const EventType = proto.temporal.api.enums.v1.EventType;
const DEPLOYMENT = 'brigade';
const BEER_CLIENT = 'CLT-CCW784';

export interface UpgradeOutcome {
  v1: string;
  v2: string;
  /** conversations and what each went through */
  conversations: { name: string; id: string; finishedOn: string; runs: number }[];
  /** what broke a promise: empty when the drill passed */
  wrong: string[];
  notes: string[];
}

export async function upgradeDrill(
  log: (line: string) => void,
  processLog?: (name: string, line: string) => void,
): Promise<UpgradeOutcome> {
  // The confirmation waits long enough to span the deploy; approvals wait a day by default.
  const drill = await startDrillCluster({ workers: 1, log, processLog, env: { BEER_CONFIRMATION_TIMEOUT: '5m' } });
  try {
    return await runDrill(drill, log);
  } finally {
    await drill.stop();
  }
}

async function runDrill(drill: DrillCluster, log: (line: string) => void): Promise<UpgradeOutcome> {
  const wrong: string[] = [];
  const notes: string[] = [];
  const { cluster } = drill;
  // the cluster's workers encrypt with the key it keeps in the app's data dir: listings and replays need it
  const key = await loadOrCreatePayloadKey(drill.appDataDir);
  const keys = new StaticKeyProvider({ [DEV_KEY_ID]: new Uint8Array(key) }, DEV_KEY_ID);
  // a person's payloads are sealed under their data key, kept in the cluster's PostgreSQL
  const pool = new pg.Pool({ connectionString: cluster.postgres.url, max: 2 });
  pool.on('error', () => undefined);
  const codec = new EncryptionCodec(keys, new PersonKeys(pool, keys));
  const connection = await Connection.connect({ address: cluster.temporalAddress });
  const client = new Client({ connection, namespace: cluster.namespace, dataConverter: { payloadCodecs: [codec] } });
  const cliBinary = await findTemporalBinary({ cliPath: process.env.TEMPORAL_CLI_PATH || undefined });
  /** the handbook's commands, as an operator types them */
  const cli = async (...args: string[]) => {
    const { stdout } = await run(cliBinary, [...args, '--address', cluster.temporalAddress, '--namespace', cluster.namespace], {
      timeout: 60_000,
    });
    return stdout;
  };
  try {
    const v1 = await currentBuildId(client);
    log(`upgrade: version 1 is ${DEPLOYMENT}:${v1}`);

    // ---- version 1: conversations parked on every kind this cluster can park on, one idle, a pipeline mid-way ----
    const conversations: Record<string, string> = {};
    const decisions: Record<string, () => Promise<unknown>> = {};

    conversations.idle = await drill.openConversation('upgrade: idle');
    expectStatus(
      'idle turn',
      await drill.post(`/v1/conversations/${conversations.idle}/messages`, { text: 'status of order 13579' }),
      200,
      wrong,
    );

    conversations.approval = await drill.openConversation('upgrade: approval');
    const approval = await drill.post(`/v1/conversations/${conversations.approval}/messages`, { text: 'cancel order 24680' });
    const approvalItem = approval.body?.pending?.[0];
    if (approvalItem?.kind !== 'approval')
      throw new Error(`no approval parked: ${approval.status} ${JSON.stringify(approval.body).slice(0, 300)}`);
    decisions.approval = () =>
      drill.post(`/v1/conversations/${conversations.approval}/decisions`, { pendingId: approvalItem.id, decision: 'approve' });

    conversations.save = await drill.openConversation('upgrade: save approval', { agent: 'recipes' });
    const save = await drill.post(`/v1/conversations/${conversations.save}/messages`, {
      text: 'save this recipe: Old Fashioned. Ingredients: bourbon, sugar, bitters.',
    });
    const saveItem = save.body?.pending?.[0];
    if (saveItem?.kind !== 'approval')
      throw new Error(`no save approval parked: ${save.status} ${JSON.stringify(save.body).slice(0, 300)}`);
    decisions.save = () => drill.post(`/v1/conversations/${conversations.save}/decisions`, { pendingId: saveItem.id, decision: 'approve' });

    conversations.beer = await drill.openConversation('upgrade: brewery confirmation', { agent: 'beer', client: BEER_CLIENT });
    const beer = await drill.post(`/v1/conversations/${conversations.beer}/messages`, { text: 'recommend breweries' });
    const beerItem = beer.body?.pending?.[0];
    if (beerItem?.kind !== 'confirmation')
      throw new Error(`no confirmation parked: ${beer.status} ${JSON.stringify(beer.body).slice(0, 300)}`);
    decisions.beer = () =>
      drill.post(`/v1/conversations/${conversations.beer}/decisions`, { pendingId: beerItem.id, decision: 'no', reason: 'not today' });

    conversations.pipeline = await drill.openConversation('upgrade: pipeline mid-way', { agent: 'recipes' });
    const pipeline = await drill.post(`/v1/conversations/${conversations.pipeline}/messages`, {
      text: 'save this recipe: Manhattan. Ingredients: rye, vermouth.',
    });
    const pipelineItem = pipeline.body?.pending?.[0];
    if (pipelineItem?.kind !== 'approval') throw new Error(`no pipeline approval parked: ${pipeline.status}`);
    const held = drill.model.hold('Manhattan', 'structure');
    // The decision answers once the pipeline is done, which is after the switch: it is awaited at the end.
    const pipelineDecision = drill.post(`/v1/conversations/${conversations.pipeline}/decisions`, {
      pendingId: pipelineItem.id,
      decision: 'approve',
    });
    await held.reached;
    log('upgrade: version 1 has an idle conversation, three parked on a decision and a save pipeline held mid-way');

    // ---- the replay gate: version 2 cannot replace version 1 in place ----
    const dir = await fs.mkdtemp(path.join(drill.appDataDir, '..', 'v2-'));
    const v2Bundle = path.join(dir, 'workflows-v2.js');
    await bundleWorkflows({ outFile: v2Bundle, catalog: builtInCatalog(), variant: path.join(import.meta.dirname, 'workflows-v2.ts') });
    const v2 = buildIdOf(await fs.readFile(v2Bundle, 'utf8'));
    const live = await liveHistories(client, { limit: 50, taskQueue: cluster.taskQueue });
    const gate = await replayAll(v2Bundle, live, { payloadCodecs: [codec] });
    if (gate.failures.length === 0) wrong.push('the replay gate let version 2 replace version 1 in place');
    notes.push(
      `replay gate: ${gate.failures.length} of ${gate.replayed} live histories do not replay on v2, so it goes in as a new version`,
    );

    // ---- deploy by the handbook: start v2's workers, switch, wake the idle ones ----
    const v2Worker = await cluster.addWorker('worker-v2', { WORKFLOW_BUNDLE_PATH: v2Bundle, WORKER_SET_CURRENT: 'never' });
    await eventually('version 2 registered', async () => ((await versionsOf(client)).includes(v2) ? true : undefined));
    await cli('worker', 'deployment', 'set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', v2, '--yes');
    if ((await currentBuildId(client)) !== v2) wrong.push('set-current-version did not make v2 current');
    const wakeIdle = () =>
      cli(
        'workflow',
        'signal',
        '--query',
        `TemporalWorkerDeploymentVersion = '${DEPLOYMENT}:${v1}' AND ExecutionStatus = 'Running' AND WorkflowType = 'chatSession'`,
        '--name',
        'upgrade',
        '--reason',
        'upgrade drill: move idle conversations to the current version',
        '--yes',
      );
    await wakeIdle();
    log(`upgrade: version 2 (${v2}) is current; idle conversations woken`);

    // A new conversation starts on v2 at once; the idle one moves there by continue-as-new.
    conversations.fresh = await drill.openConversation('upgrade: new on v2');
    expectStatus(
      'new conversation on v2',
      await drill.post(`/v1/conversations/${conversations.fresh}/messages`, { text: 'status of order 11111' }),
      200,
      wrong,
    );
    // The batch signal finds runs through visibility, which the server updates on its own time: a run it missed
    // is still on v1, and the handbook's answer is to run the same command again (the signal is idempotent).
    const onV2 = async () => ((await buildIdOfRun(client, drill.workflowIdOf(conversations.idle!))) === v2 ? true : undefined);
    const moved = await eventually('the idle conversation on v2', onV2, 20_000).catch(() => undefined);
    if (!moved) {
      notes.push('upgrade: the first batch signal left the idle conversation on v1; the handbook command was run again');
      await wakeIdle();
      await eventually('the idle conversation on v2 (after the command again)', onV2, 30_000);
    }

    // Parked ones are decided now: each finishes its turn on v1 (pinned), then moves.
    for (const name of ['approval', 'save', 'beer'] as const)
      expectStatus(`${name} decided`, (await decisions[name]!()) as { status: number; body: unknown }, 200, wrong);
    held.release();
    expectStatus('pipeline decided', await pipelineDecision, 200, wrong);

    // ---- every conversation takes its next message, on v2 ----
    const finished: UpgradeOutcome['conversations'] = [];
    for (const [name, id] of Object.entries(conversations)) {
      const workflowId = drill.workflowIdOf(id);
      await eventually(`${name} on v2`, async () => ((await buildIdOfRun(client, workflowId)) === v2 ? true : undefined), 30_000).catch(
        (error: Error) => wrong.push(error.message),
      );
      expectStatus(
        `${name}: next message`,
        await drill.post(`/v1/conversations/${id}/messages`, { text: `status of order 22222 (${name})` }),
        200,
        wrong,
      );
      const runs = await runsOf(client, workflowId);
      finished.push({ name, id, finishedOn: (await buildIdOfRun(client, workflowId)) ?? 'unknown', runs: runs.length });
      for (const run of runs) {
        if (run.failedTasks > 0) wrong.push(`${name}: ${run.failedTasks} workflow task failure(s) in run ${run.runId}`);
      }
      const lastTask = runs.at(-1)!.lastCompletedBy;
      if (!lastTask?.startsWith(`${v2Worker.pid}@`))
        wrong.push(`${name}: its last workflow task ran on ${lastTask ?? 'nobody'}, not on v2's worker`);
    }

    // Children (the save pipelines, the brewery recommendation) finished where they started: on v1.
    const children = await listIds(client, `WorkflowType != 'chatSession' AND TaskQueue = '${cluster.taskQueue}'`);
    for (const childId of children) {
      for (const run of await runsOf(client, childId)) if (run.failedTasks > 0) wrong.push(`child ${childId}: a workflow task failed`);
    }

    // ---- drain: nothing runs on v1 any more, so its workers can go ----
    const stillOnV1 = await eventually(
      'v1 drained',
      async () => {
        const running = await listIds(client, `TemporalWorkerDeploymentVersion = '${DEPLOYMENT}:${v1}' AND ExecutionStatus = 'Running'`);
        return running.length === 0 ? running : undefined;
      },
      30_000,
    ).catch(() => ['(not drained)']);
    if (stillOnV1.length > 0) wrong.push(`version 1 still runs workflows after the drain: ${stillOnV1.join(', ')}`);
    await cluster.workers[0]!.stop();
    expectStatus(
      'after v1 stopped',
      await drill.post(`/v1/conversations/${conversations.approval}/messages`, { text: 'status of order 33333' }),
      200,
      wrong,
    );
    const deployments = await cli('worker', 'deployment', 'describe', '--name', DEPLOYMENT);
    notes.push(`temporal worker deployment describe --name ${DEPLOYMENT}: current ${deployments.includes(v2) ? v2 : '(v2 not shown)'}`);
    return { v1, v2, conversations: finished, wrong, notes };
  } finally {
    await pool.end();
    await connection.close();
  }
}

function expectStatus(what: string, result: { status: number; body: unknown }, status: number, wrong: string[]) {
  if (result.status !== status) wrong.push(`${what}: ${result.status} ${JSON.stringify(result.body).slice(0, 300)}`);
}

async function eventually<T>(what: string, find: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not there after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

async function currentBuildId(client: Client): Promise<string> {
  const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({
    namespace: client.options.namespace,
    deploymentName: DEPLOYMENT,
  });
  const current = workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId;
  if (!current) throw new Error(`deployment ${DEPLOYMENT} has no current version`);
  return current;
}

async function versionsOf(client: Client): Promise<string[]> {
  const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({
    namespace: client.options.namespace,
    deploymentName: DEPLOYMENT,
  });
  return (workerDeploymentInfo?.versionSummaries ?? []).map((summary) => summary.deploymentVersion?.buildId ?? '');
}

/** The build id the workflow's current run is on (its effective version). */
async function buildIdOfRun(client: Client, workflowId: string): Promise<string | undefined> {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return info?.deploymentVersion?.buildId ?? undefined;
}

async function listIds(client: Client, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids;
}

/** Every run of a workflow, oldest first, through continue-as-new: failed workflow tasks and who ran the last one. */
async function runsOf(client: Client, workflowId: string) {
  const described = await client.workflow.getHandle(workflowId).describe();
  let runId: string | undefined = described.raw.workflowExecutionInfo?.firstRunId ?? described.runId;
  const runs: { runId: string; failedTasks: number; lastCompletedBy?: string }[] = [];
  while (runId) {
    const events: proto.temporal.api.history.v1.IHistoryEvent[] =
      (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    const completed = events.filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    runs.push({
      runId,
      failedTasks: events.filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).length,
      lastCompletedBy: completed.at(-1)?.workflowTaskCompletedEventAttributes?.identity ?? undefined,
    });
    const last: proto.temporal.api.history.v1.IHistoryEvent | undefined = events.at(-1);
    runId =
      last?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        ? (last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined)
        : undefined;
  }
  return runs;
}
