// Determinism: histories of real runs replay against the current workflow code without
// nondeterminism errors. Fresh runs are recorded and replayed every time; the histories saved in
// test/histories (by `npm run record-histories`) guard against changes that would break running workflows.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../support/harness.ts';
import { createOfflineModel } from '../../src/model/offline.ts';
import { REPLAY_BUDGET, slowOnRequest, scenarios as supportScenarios } from '../support/scenarios.ts';
import { beerScenarios } from '../support/scenarios-beer.ts';
import { REPLAY_DATA_DIR, recipeScenarios } from '../support/scenarios-recipes.ts';
import { mcpScenarios } from '../support/scenarios-mcp.ts';
import { sousScenarios } from '../support/scenarios-sous.ts';
import { type TestApp, startTestApp } from '../support/test-app.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { temporalScheduleId } from '../../src/shared/schedules.ts';

// Encoded protobuf rather than JSON: the SDK's historyToJSON trips over its own duplicated protobufjs copies.
const { History } = proto.temporal.api.history.v1;
const HISTORIES = path.join(import.meta.dirname, '../histories');
const recording = process.env.RECORD_HISTORIES === '1';
const scenarios = [...supportScenarios, ...recipeScenarios, ...beerScenarios, ...sousScenarios, ...mcpScenarios];

let app: TestApp;
before(async () => {
  // Three turns per run, so the scenarios cross continue-as-new and its replay is covered too.
  // The offline model, streaming slowly when a scenario asks (the Stop scenarios).
  // A budget per conversation far above what the scenarios spend, except the one that spends a lot.
  app = await startTestApp({
    env: { CONTINUE_AS_NEW_AFTER_TURNS: '3', DATA_DIR: REPLAY_DATA_DIR, TOKEN_BUDGET_PER_CONVERSATION: String(REPLAY_BUDGET) },
    model: slowOnRequest(createOfflineModel(builtInCatalog())),
  });
});
after(async () => {
  await app?.stop();
  await fs.rm(REPLAY_DATA_DIR, { recursive: true, force: true });
});

async function replay(workflowId: string, history: unknown): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, workflowId);
}

const EventType = proto.temporal.api.enums.v1.EventType;

/**
 * Every run of a workflow with a completed workflow task, oldest first, followed through continue-as-new
 * by the histories themselves (visibility may lag behind).
 */
async function historiesOf(workflowId: string) {
  const described = await app.client.workflow.getHandle(workflowId).describe();
  let runId: string | undefined = described.raw.workflowExecutionInfo?.firstRunId ?? described.runId;
  const runs: { history: proto.temporal.api.history.v1.IHistory; continued: boolean }[] = [];
  while (runId) {
    const history: proto.temporal.api.history.v1.IHistory = await app.client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: proto.temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
    const last = events.at(-1);
    const continued: boolean = last?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW;
    // A run whose first workflow task has not completed yet has nothing to replay.
    if (events.some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)) runs.push({ history, continued });
    runId = continued ? (last!.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined) : undefined;
  }
  return runs;
}

describe('fresh histories replay', () => {
  for (const scenario of scenarios.filter((s) => !process.env.SCENARIO || s.name === process.env.SCENARIO)) {
    test(scenario.name, async () => {
      const id = await scenario.run(app);
      const runs = await historiesOf(`conversation-${id}`);
      assert.ok(runs.length > 0, 'the scenario left a run to replay');
      for (const [index, { history }] of runs.entries()) {
        await replay(`conversation-${id}`, history);
        if (recording) {
          const file = path.join(HISTORIES, `${scenario.name}${runs.length > 1 ? `-run${index + 1}` : ''}.binpb`);
          await fs.writeFile(file, History.encode(history).finish());
        }
      }
      if (scenario.name === 'approve-reject-edit') {
        assert.ok(runs[0]!.continued, 'three turns continue as new');
      }
    });
  }
});

// A schedule's run (issue 48): the scheduledRun workflow a Temporal Schedule starts, recorded like a conversation.
describe('a scheduled run replays', () => {
  const name = 'scheduled-run';
  test(name, { skip: process.env.SCENARIO !== undefined && process.env.SCENARIO !== name }, async () => {
    const made = await app.call('POST', '/v1/schedules', { body: { agent: 'support', text: 'cancel order 13579', every: '10s' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const schedule = app.client.schedule.getHandle(temporalScheduleId(made.body.id));
    let workflowId: string | undefined;
    for (const deadline = Date.now() + 45_000; !workflowId && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      workflowId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
    }
    assert.ok(workflowId, 'the schedule started a run');
    await schedule.delete();
    const handle = app.client.workflow.getHandle(workflowId);
    const lastRun = await handle.result();
    assert.equal(lastRun.outcome, 'sent', JSON.stringify(lastRun));
    const history = await handle.fetchHistory();
    await replay(workflowId, history);
    if (recording) await fs.writeFile(path.join(HISTORIES, `${name}.binpb`), History.encode(history).finish());
  });
});

describe('saved histories replay', () => {
  test('every history in test/histories', async (t) => {
    const files = (await fs.readdir(HISTORIES)).filter((file) => file.endsWith('.binpb'));
    assert.ok(files.length >= scenarios.length, 'histories are saved (npm run record-histories)');
    for (const file of files) {
      await t.test(file, async () => {
        const history = History.decode(await fs.readFile(path.join(HISTORIES, file)));
        await replay(`conversation-${file}`, history);
      });
    }
  });
});
