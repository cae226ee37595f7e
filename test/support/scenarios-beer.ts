// A beer conversation for the replay test: three recommendations, answered yes (by decision), no (by
// message) and not at all (the deadline), so chatSession's confirmation paths and its continue-as-new
// after three turns are recorded. It runs on an app of its own (a local OpenBreweryDB, a short deadline)
// on the same Temporal server, so the replay test finds its histories. The recommendation workflows'
// histories are replayed here too, and saved beside the conversation's when recording.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { SAN_DIEGO_CLIENT, untilIdle } from './beer.ts';
import { startFakeOpenBreweryDb } from './fake-openbrewerydb.ts';
import { workflowBundlePath } from './harness.ts';
import type { Scenario } from './scenarios.ts';
import { ERIN_BEER_STAFF, type TestApp, startTestApp } from './test-app.ts';

const HISTORIES = path.join(import.meta.dirname, '..', 'histories');

export const beerScenarios: Scenario[] = [
  {
    name: 'beer-recommend-yes-no-timeout',
    async run() {
      const api = await startFakeOpenBreweryDb();
      const app = await startTestApp({
        env: { OPENBREWERYDB_BASE_URL: api.baseUrl, BEER_CONFIRMATION_TIMEOUT: '3s', CONTINUE_AS_NEW_AFTER_TURNS: '3' },
      });
      const call: TestApp['call'] = (method, p, options = {}) => app.call(method, p, { token: ERIN_BEER_STAFF, ...options });
      try {
        const created = await call('POST', '/v1/conversations', { body: { agent: 'beer', client: SAN_DIEGO_CLIENT, title: 'replay' } });
        const id = created.body.id as string;
        const say = async (text: string, pending?: 'decline') =>
          (await call('POST', `/v1/conversations/${id}/messages`, { body: { text, ...(pending ? { pending } : {}) } })).body;
        const first = await say('recommend breweries');
        const yes = await call('POST', `/v1/conversations/${id}/decisions`, {
          body: { pendingId: first.pending[0].id, decision: 'yes', choice: first.pending[0].options[0].id },
        });
        assert.equal(yes.status, 200, JSON.stringify(yes.body));
        await say('recommend breweries');
        await say('no', 'decline');
        await say('recommend breweries');
        const view = await untilIdle(call, id, 20_000);
        const runs = view.messages.filter((m: any) => m.tool === 'recommend_breweries').map((m: any) => m.result);
        assert.deepEqual(
          runs.map((r: any) => r.answer),
          ['yes', 'no', 'timeout'],
        );
        const { History } = proto.temporal.api.history.v1;
        for (const [index, run] of runs.entries()) {
          const history = await app.client.workflow.getHandle(run.workflow_id).fetchHistory();
          await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, run.workflow_id);
          if (process.env.RECORD_HISTORIES === '1') {
            await fs.writeFile(
              path.join(HISTORIES, `beer-recommendation-${run.answer}-${index + 1}.binpb`),
              History.encode(history).finish(),
            );
          }
        }
        return id;
      } finally {
        await app.stop();
        await api.close();
      }
    },
  },
];
