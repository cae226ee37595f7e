// Replay scenarios of the recipes agent's save flow: chatSession parks on save_recipe's approval and runs
// saveRecipe as a child (approve, edit, reject), on the offline model. The child's own history is replayed
// (and saved by `npm run record-histories`) here, since the replay test follows conversations only.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from './harness.ts';
import { OLD_FASHIONED } from './recipes.ts';
import type { Scenario } from './scenarios.ts';
import type { TestApp } from './test-app.ts';

const { History } = proto.temporal.api.history.v1;
const HISTORIES = path.join(import.meta.dirname, '..', 'histories');

/** The replay app's DATA_DIR: saved images go to a temporary folder, not the checkout's .data. */
export const REPLAY_DATA_DIR = path.join(os.tmpdir(), `brigade-replay-${process.pid}`);

const turn = async (app: TestApp, pathname: string, body: Record<string, unknown>) => {
  const answer = await app.call('POST', pathname, { body });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
};

export const recipeScenarios: Scenario[] = [
  {
    name: 'recipes-save',
    async run(app) {
      const created = await app.call('POST', '/v1/conversations', { body: { agent: 'recipes', title: 'replay' } });
      assert.equal(created.status, 201);
      const id: string = created.body.id;
      const say = (text: string) => turn(app, `/v1/conversations/${id}/messages`, { text });
      const decide = (body: Record<string, unknown>) => turn(app, `/v1/conversations/${id}/decisions`, body);

      const first = await say(`save this recipe: ${OLD_FASHIONED}`);
      const approved = await decide({ pendingId: first.pending[0].id, decision: 'approve' });
      const second = await say('save this recipe: Daiquiri. Ingredients: 2 oz rum, 1 oz lime juice, 3/4 oz syrup. Type: cocktail.');
      await decide({
        pendingId: second.pending[0].id,
        decision: 'edit',
        args: {
          raw_recipe_data: 'Daiquiri. Ingredients: 2 oz white rum, 1 oz lime juice. Instructions: 1) Shake, 2) Strain. Type: cocktail.',
        },
      });
      const third = await say('save this recipe: Tiramisu. Ingredients: mascarpone, espresso, ladyfingers. Type: dessert.');
      await decide({ pendingId: third.pending[0].id, decision: 'reject', reason: 'not this one' });

      const saved = approved.messages.find((message: any) => message.role === 'tool').result;
      assert.equal(saved.status, 'saved');
      const childId = `save-recipe-${saved.recipe_id}`;
      const history = await app.client.workflow.getHandle(childId).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, childId);
      if (process.env.RECORD_HISTORIES === '1') {
        await fs.writeFile(path.join(HISTORIES, 'recipes-save-child.binpb'), History.encode(history).finish());
      }
      return id;
    },
  },
];
