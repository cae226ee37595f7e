// save_recipe through the API against real Temporal and PostgreSQL, with the real @google/genai client
// against a scripted Gemini-compatible server: the approval, the five-step pipeline with its progress events
// over SSE, the recipe card, the image served without a bearer, one row; rejection, edits, a structuring
// answer that never fits, and an image that cannot be made.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { placeholderPng } from '../offline-save.ts';
import { responseSchema } from '../../../model/structured.ts';
import { RecipeContent } from '../recipe.ts';
import { freePort } from '../../../../stack/ports.ts';
import {
  type FakeGemini,
  type FakeReply,
  type RecordedRequest,
  endsWithToolResults,
  lastContent,
  reply,
  startFakeGemini,
} from '../../../../test/support/fake-gemini.ts';
import { OLD_FASHIONED, OLD_FASHIONED_JSON, adminQuery, fetchPng } from '../../../../test/support/recipes.ts';
import { type SseEvent, readSse } from '../../../../test/support/sse.ts';
import { ALICE, type TestApp, startTestApp } from '../../../../test/support/test-app.ts';

let fake: FakeGemini;
let app: TestApp;
let dataDir: string;

type Kind = 'chat' | 'structure' | 'image_prompt' | 'image';
/** Each test says how each kind of request is answered; the router tells them apart by model and config. */
let handlers: Partial<Record<Kind, (request: RecordedRequest) => FakeReply | undefined>>;

function kindOf(request: RecordedRequest): Kind {
  if (request.model.includes('image')) return 'image';
  if (request.body.generationConfig?.responseJsonSchema) return 'structure';
  return request.stream ? 'chat' : 'image_prompt';
}
const requestsOf = (kind: Kind) => fake.requests.filter((request) => kindOf(request) === kind);
const promptOf = (request: RecordedRequest) => (lastContent(request)?.parts ?? []).map((part) => part.text ?? '').join('');

const PNG = placeholderPng('fake gemini image');

before(async () => {
  fake = await startFakeGemini({ apiKey: 'recipes-key' });
  fake.scriptFn((request) => handlers[kindOf(request)]?.(request));
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-recipes-'));
  app = await startTestApp({
    apiPort: await freePort(),
    env: { GEMINI_API_KEY: 'recipes-key', GEMINI_BASE_URL: fake.baseUrl, MODEL_TIMEOUT: '5s', DATA_DIR: dataDir },
  });
});
after(async () => {
  await app?.stop();
  await fake?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  fake.reset();
  fake.scriptFn((request) => handlers[kindOf(request)]?.(request));
  handlers = {
    chat: (request) =>
      endsWithToolResults(request) ? reply.text('Done.') : reply.calls({ name: 'save_recipe', args: { raw_recipe_data: OLD_FASHIONED } }),
    structure: () => reply.text(JSON.stringify(OLD_FASHIONED_JSON)),
    image_prompt: () => reply.text('A professional photograph of an Old Fashioned in a rocks glass with an orange peel.'),
    image: () => reply.image(PNG),
  };
});

async function openAndAsk(text = 'Please save the Old Fashioned recipe we talked about'): Promise<{ id: string; turn: any }> {
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'recipes' } });
  assert.equal(created.status, 201);
  const turn = await app.call('POST', `/v1/conversations/${created.body.id}/messages`, { body: { text } });
  assert.equal(turn.status, 200, JSON.stringify(turn.body));
  return { id: created.body.id, turn: turn.body };
}

const decide = (id: string, body: Record<string, unknown>) => app.call('POST', `/v1/conversations/${id}/decisions`, { body });
const toolMessageOf = (turn: any) => turn.messages.find((message: any) => message.role === 'tool');
const recipeRows = () => adminQuery(app.adminUrl, 'SELECT * FROM saved_recipes ORDER BY created_at');
const progressOf = (events: SseEvent[]) =>
  events.filter((event) => event.event === 'progress').map((event) => `${event.data.data.step}:${event.data.data.state}`);

test('approve: the pipeline runs with progress events over SSE, the card comes back, the image serves a PNG, one row', async () => {
  const before = (await recipeRows()).length;
  const { id, turn } = await openAndAsk();
  const [pending] = turn.pending;
  assert.equal(pending.kind, 'approval');
  assert.equal(pending.tool, 'save_recipe');
  assert.deepEqual(pending.args, { raw_recipe_data: OLD_FASHIONED });
  assert.deepEqual(pending.decisions, ['approve', 'reject', 'edit']);

  // Hold the image so the pipeline is caught mid-way: the progress so far must already reach SSE clients.
  const held = reply.hold(reply.image(PNG));
  handlers.image = () => held;
  const sse = readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
    token: ALICE,
    until: (events) => progressOf(events).includes('image:started'),
  });
  const decided = decide(id, { pendingId: pending.id, decision: 'approve' });
  await held.reached;
  const midway = progressOf(await sse);
  assert.deepEqual(midway, ['structure:started', 'structure:done', 'image_prompt:started', 'image_prompt:done', 'image:started']);
  let answered = false;
  void decided.then(() => (answered = true));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(answered, false, 'the decision answers once the pipeline has finished');
  held.release();

  const result = await decided;
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const tool = toolMessageOf(result.body);
  const recipeId = tool.result.recipe_id;
  assert.match(recipeId, /^[0-9a-f-]{36}$/);
  assert.deepEqual(tool.result, {
    status: 'saved',
    recipe_id: recipeId,
    recipe_name: 'Old Fashioned',
    image_url: `${app.baseUrl}/files/recipes/${recipeId}.png`,
    message: `Saved 'Old Fashioned' to your collection, with its image.`,
  });
  assert.deepEqual(tool.cards, [
    {
      type: 'recipe_card',
      recipe_id: recipeId,
      recipe_name: 'Old Fashioned',
      recipe_type: 'cocktail',
      prep_time: 5,
      servings: 1,
      image_url: tool.result.image_url,
      status: 'saved',
      actions: ['delete', 'modify'],
    },
  ]);
  assert.equal(result.body.messages.at(-1).text, 'Done.');

  // the image, as an <img> would load it
  const png = await fetchPng(tool.result.image_url);
  assert.ok(png.equals(Buffer.from(PNG)), 'the stored image is the model’s');

  // one row, with what the structuring step returned
  const rows = await recipeRows();
  assert.equal(rows.length, before + 1);
  const row = rows.find((candidate: any) => candidate.id === recipeId);
  assert.equal(row.name, 'Old Fashioned');
  assert.deepEqual(row.ingredients, OLD_FASHIONED_JSON.ingredients);
  assert.deepEqual(row.tags, ['bourbon', 'classic']);
  assert.equal(row.image_url, tool.result.image_url);
  assert.equal(row.user_id, 'alice');

  // every step's events, in order, in the conversation's event log
  const all = await readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
    token: ALICE,
    until: (events) => events.some((event) => event.event === 'turn.ended'),
  });
  assert.deepEqual(progressOf(all), [
    ...['structure', 'image_prompt', 'image', 'upload', 'insert'].flatMap((step) => [`${step}:started`, `${step}:done`]),
  ]);
  const first = all.find((event) => event.event === 'progress')!.data.data;
  assert.deepEqual(first, {
    workflowId: `save-recipe-${recipeId}`,
    step: 'structure',
    index: 1,
    of: 5,
    state: 'started',
    steps: ['structure', 'image_prompt', 'image', 'upload', 'insert'],
  });

  // what the model calls looked like
  const [structuring] = requestsOf('structure');
  assert.deepEqual(structuring!.body.generationConfig?.responseJsonSchema, responseSchema(RecipeContent));
  assert.ok(promptOf(structuring!).includes(OLD_FASHIONED));
  const [image] = requestsOf('image');
  assert.equal(image!.model, 'gemini-3-pro-image-preview');
  assert.deepEqual(image!.body.generationConfig?.responseModalities, ['IMAGE']);
  assert.equal(promptOf(image!), 'A professional photograph of an Old Fashioned in a rocks glass with an orange peel.');

  // the child workflow: readable ID, completed, every step an activity with a summary
  const handle = app.client.workflow.getHandle(`save-recipe-${recipeId}`);
  assert.equal((await handle.describe()).status.name, 'COMPLETED');
  const history = await handle.fetchHistory();
  const summaries = (history.events ?? [])
    .filter((event) => event.activityTaskScheduledEventAttributes)
    .map((event) => event.activityTaskScheduledEventAttributes!.activityType!.name);
  assert.deepEqual(summaries, ['structureRecipe', 'writeImagePrompt', 'generateRecipeImage', 'uploadRecipeImage', 'insertRecipe']);
  assert.ok(
    (history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes).every((event) => event.userMetadata?.summary),
  );
});

test('reject with a reason: nothing runs, and the reason reaches the model', async () => {
  const before = (await recipeRows()).length;
  const { id, turn } = await openAndAsk();
  const result = await decide(id, { pendingId: turn.pending[0].id, decision: 'reject', reason: 'use rye, not bourbon' });
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const tool = toolMessageOf(result.body);
  assert.equal(tool.result.status, 'rejected');
  assert.equal(tool.cards, undefined);

  const followUp = requestsOf('chat').at(-1)!;
  const response = (lastContent(followUp)?.parts ?? []).find((part) => part.functionResponse)?.functionResponse;
  assert.equal(response.name, 'save_recipe');
  assert.match(JSON.stringify(response.response), /use rye, not bourbon/);
  assert.equal(requestsOf('structure').length, 0, 'no pipeline ran');
  assert.equal((await recipeRows()).length, before);
});

test('edit: the edited text is what gets structured and saved', async () => {
  const manhattan =
    'Manhattan cocktail. Ingredients: 2 oz rye, 1 oz sweet vermouth, 2 dashes bitters. Instructions: 1) Stir with ice, 2) Strain. Serves: 1. Type: cocktail.';
  handlers.structure = (request) =>
    reply.text(
      JSON.stringify(
        promptOf(request).includes('Manhattan') ? { ...OLD_FASHIONED_JSON, name: 'Manhattan', prep_time: 3 } : OLD_FASHIONED_JSON,
      ),
    );
  const { id, turn } = await openAndAsk();

  const bad = await decide(id, { pendingId: turn.pending[0].id, decision: 'edit', args: { raw_recipe_data: '' } });
  assert.equal(bad.status, 422, 'edited arguments are validated again');

  const result = await decide(id, { pendingId: turn.pending[0].id, decision: 'edit', args: { raw_recipe_data: manhattan } });
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const tool = toolMessageOf(result.body);
  assert.equal(tool.result.recipe_name, 'Manhattan');
  assert.deepEqual(tool.args, { raw_recipe_data: manhattan });
  assert.ok(promptOf(requestsOf('structure')[0]!).includes(manhattan));
  const [row] = await adminQuery(app.adminUrl, 'SELECT name, prep_time FROM saved_recipes WHERE id = $1', [tool.result.recipe_id]);
  assert.deepEqual(row, { name: 'Manhattan', prep_time: 3 });
});

test('a structuring answer that never fits the schema is asked again, then reported; nothing is stored', async () => {
  const before = (await recipeRows()).length;
  const objects = await listObjects();
  handlers.structure = () => reply.text(JSON.stringify({ name: 'Old Fashioned', recipe_type: 'drink', ingredients: 'bourbon' }));
  const { id, turn } = await openAndAsk();
  const result = await decide(id, { pendingId: turn.pending[0].id, decision: 'approve' });
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const tool = toolMessageOf(result.body);
  assert.equal(tool.result.status, 'error');
  assert.match(
    tool.result.error,
    /^Could not save the recipe: The recipe structuring model gave no valid answer in 3 attempt\(s\): the answer did not fit its schema \(recipe_type: .*\)\. Nothing was saved\.$/,
  );
  assert.equal(tool.cards, undefined);

  const structuring = requestsOf('structure');
  assert.equal(structuring.length, 3, 'MODEL_SCHEMA_ATTEMPTS answers');
  assert.match(promptOf(structuring[1]!), /Your previous answer was refused: the answer did not fit its schema/);
  assert.equal(requestsOf('image_prompt').length + requestsOf('image').length, 0);
  assert.equal((await recipeRows()).length, before);
  assert.deepEqual(await listObjects(), objects);

  // the model is told, and the progress says where it stopped
  const followUp = requestsOf('chat').at(-1)!;
  assert.match(JSON.stringify(lastContent(followUp)), /Nothing was saved/);
  const events = await readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
    token: ALICE,
    until: (all) => all.some((event) => event.event === 'turn.ended'),
  });
  assert.deepEqual(progressOf(events), [
    'structure:started',
    'structure:failed',
    'image_prompt:skipped',
    'image:skipped',
    'upload:skipped',
    'insert:skipped',
  ]);
});

test('an image that cannot be made: the recipe is saved with image_url null and the message says so', async () => {
  handlers.image = () => reply.error(400, 'Image generation is not available for this prompt');
  const { id, turn } = await openAndAsk();
  const result = await decide(id, { pendingId: turn.pending[0].id, decision: 'approve' });
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const tool = toolMessageOf(result.body);
  assert.equal(tool.result.status, 'saved');
  assert.equal(tool.result.image_url, null);
  assert.match(
    tool.result.message,
    /^Saved 'Old Fashioned' to your collection without an image: the image generation failed \(.*Image generation is not available for this prompt.*\)\.$/,
  );
  assert.equal(tool.cards[0].image_url, null);
  const [row] = await adminQuery(app.adminUrl, 'SELECT name, image_url FROM saved_recipes WHERE id = $1', [tool.result.recipe_id]);
  assert.deepEqual(row, { name: 'Old Fashioned', image_url: null });
  assert.equal(requestsOf('image').length, 1, 'a 400 is not retried');

  const events = await readSse(`${app.baseUrl}/v1/conversations/${id}/events`, {
    token: ALICE,
    until: (all) => all.some((event) => event.event === 'turn.ended'),
  });
  assert.deepEqual(progressOf(events), [
    'structure:started',
    'structure:done',
    'image_prompt:started',
    'image_prompt:done',
    'image:started',
    'image:failed',
    'upload:skipped',
    'insert:started',
    'insert:done',
  ]);
});

async function listObjects(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), `${prefix}${entry.name}/`);
      else found.push(`${prefix}${entry.name}`);
    }
  };
  await walk(path.join(dataDir, 'objects'), '');
  return found.sort();
}

test('text PostgreSQL cannot store in the model’s recipe is made storable, not a failed save', async () => {
  handlers.structure = () =>
    reply.text(JSON.stringify({ ...OLD_FASHIONED_JSON, name: 'Old\u0000Fashioned', notes: 'lone \ud83d surrogate' }));
  const { id, turn } = await openAndAsk();
  const result = await decide(id, { pendingId: turn.pending[0].id, decision: 'approve' });
  const tool = toolMessageOf(result.body);
  assert.equal(tool.result.status, 'saved', JSON.stringify(tool.result));
  const [row] = await adminQuery(app.adminUrl, 'SELECT name, notes FROM saved_recipes WHERE id = $1', [tool.result.recipe_id]);
  assert.deepEqual(row, { name: 'Old\uFFFDFashioned', notes: 'lone \uFFFD surrogate' });
});
