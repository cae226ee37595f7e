// Fault drills against the cluster shape: each breaks one part on purpose at a bad moment and checks that
// the conversations go on with nothing lost and nothing done twice. `npm run drill` prints them as a table;
// drill/drills.test.ts runs them as tests. A drill is one entry in DRILLS.
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ManagedProcess } from '../stack/cluster-process.ts';
import { DRILL_TOKEN, compareCounts, countsOf, kindOf, userTextOf, type DrillCluster } from './harness.ts';
import { sseFrames } from '../test/support/sse.ts';

export interface DrillOutcome {
  /** what was broken, and when */
  broken: string;
  /** how long it was broken */
  downMs: number;
  /** from the repair (or the fault, when nothing is repaired) until the conversations answered again */
  recoveryMs: number;
  turns: number;
  answered: number;
  lost: string[];
  doubled: string[];
  /** a promise broken other than by losing or doubling something (a deadline that moved, a call that must not happen) */
  wrong?: string[];
  notes: string[];
}

export interface Drill {
  id: number;
  name: string;
  run(drill: DrillCluster, log: (line: string) => void): Promise<DrillOutcome>;
}

const now = () => performance.now();

async function turnsOk(drill: DrillCluster, id: string, expected: Record<string, number>, label: string) {
  return compareCounts(label, expected, await countsOf(drill, id));
}

// ---- 1: the Temporal server killed while a conversation waits for an approval, and again while a turn runs ----

const temporalKilled: Drill = {
  id: 1,
  name: 'Temporal server killed (approval pending; turn running)',
  async run(drill, log) {
    const notes: string[] = [];
    const { temporal } = drill.cluster;
    let turns = 0;
    let answered = 0;

    // a) parked on an approval
    const a = await drill.openConversation('drill 1a');
    const parked = await drill.post(`/v1/conversations/${a}/messages`, { text: 'cancel order 13579' });
    turns++;
    if (parked.status !== 200 || parked.body.pending?.[0]?.tool !== 'cancel_order')
      throw new Error(`drill 1a: no approval pending: ${parked.status} ${JSON.stringify(parked.body)}`);
    answered++;
    const killedA = now();
    await temporal.kill();
    log('drill 1a: Temporal server SIGKILLed with an approval pending; starting it again');
    await temporal.start();
    const backA = now();
    const decided = await drill.post(`/v1/conversations/${a}/decisions`, { pendingId: parked.body.pending[0].id, decision: 'approve' });
    turns++;
    const recoveryA = now() - backA;
    if (decided.status === 200 && /answered cancel_order/.test(decided.body.messages?.at(-1)?.text ?? '')) answered++;
    else notes.push(`1a: the decision answered ${decided.status} ${JSON.stringify(decided.body).slice(0, 200)}`);
    if (decided.attempts > 1) notes.push(`1a: the decision needed ${decided.attempts} attempts`);
    const [order] = await drill.query(`SELECT status FROM orders WHERE id = '13579'`);
    const checkA = await turnsOk(drill, a, { user: 1, assistant: 2, tool: 1, toolCalls: 1, modelCalls: 2 }, '1a');
    if (order.status !== 'Cancelled') checkA.lost.push(`1a: order 13579 is ${order.status}, not Cancelled`);

    // b) mid-turn: the model call is in flight on a worker when the server dies
    const b = await drill.openConversation('drill 1b');
    const hold = drill.model.hold('[1b]');
    const turn = drill.post(`/v1/conversations/${b}/messages`, { text: 'status of order 24601 [1b]' });
    turns++;
    await hold.reached;
    const killedB = now();
    await temporal.kill();
    log('drill 1b: Temporal server SIGKILLed during a model call; starting it again');
    await temporal.start();
    const backB = now();
    hold.release();
    const result = await turn;
    const recoveryB = now() - backB;
    if (result.status === 200 && /answered get_order_by_id/.test(result.body.messages?.at(-1)?.text ?? '')) answered++;
    else notes.push(`1b: the turn answered ${result.status} ${JSON.stringify(result.body).slice(0, 200)}`);
    if (result.attempts > 1) notes.push(`1b: the turn's POST needed ${result.attempts} attempts (same Idempotency-Key)`);
    await drill.waitUntilIdle(b);
    const checkB = await turnsOk(drill, b, { user: 1, assistant: 2, tool: 1, toolCalls: 1, modelCalls: 2 }, '1b');

    return {
      broken: 'Temporal server SIGKILL + restart: (a) approval pending, (b) model call in flight',
      downMs: Math.max(backA - killedA, backB - killedB),
      recoveryMs: Math.max(recoveryA, recoveryB),
      turns,
      answered,
      lost: [...checkA.lost, ...checkB.lost],
      doubled: [...checkA.doubled, ...checkB.doubled],
      notes,
    };
  },
};

// ---- 2: PostgreSQL stopped for 10 s mid-turn ----

export const POSTGRES_DOWN_MS = 10_000;

const postgresStopped: Drill = {
  id: 2,
  name: 'PostgreSQL stopped for 10 s mid-turn',
  async run(drill, log) {
    const notes: string[] = [];
    const { postgres } = drill.cluster;
    if (!postgres.stop || !postgres.start) throw new Error('drill 2 needs the embedded PostgreSQL');
    const id = await drill.openConversation('drill 2');
    const hold = drill.model.hold('[2]');
    const turn = drill.post(`/v1/conversations/${id}/messages`, { text: 'status of order 47652 [2]' }, { timeoutMs: 180_000 });
    await hold.reached;
    const stopped = now();
    await postgres.stop();
    log('drill 2: PostgreSQL stopped during a model call; the call now answers, and its writes must wait');
    hold.release();

    // Meanwhile the API must say "come back later", not fail or hang.
    const probes: string[] = [];
    let unavailable = 0;
    let probesTotal = 0;
    while (now() - stopped < POSTGRES_DOWN_MS) {
      const view = await drill.call('GET', `/v1/conversations/${id}`);
      probesTotal++;
      if (view.status === 503 && view.headers.get('retry-after')) unavailable++;
      else probes.push(`${view.status}${view.headers.get('retry-after') ? '' : ' (no Retry-After)'}`);
      await sleep(1_000);
    }
    await postgres.start();
    const back = now();
    log('drill 2: PostgreSQL is back');
    const result = await turn;
    const recoveryMs = now() - back;
    const lost: string[] = [];
    if (unavailable !== probesTotal)
      lost.push(
        `2: ${probesTotal - unavailable}/${probesTotal} requests during the outage were not 503 with Retry-After: ${probes.join(', ')}`,
      );
    let answered = 0;
    if (result.status === 200 && /answered get_order_by_id/.test(result.body.messages?.at(-1)?.text ?? '')) answered++;
    else notes.push(`2: the turn answered ${result.status} ${JSON.stringify(result.body).slice(0, 200)}`);
    notes.push(
      `2: ${unavailable}/${probesTotal} reads during the outage answered 503 with Retry-After; the turn's POST took ${result.attempts} attempt(s)`,
    );
    await drill.waitUntilIdle(id);
    const check = await turnsOk(drill, id, { user: 1, assistant: 2, tool: 1, toolCalls: 1, modelCalls: 2 }, '2');
    const [events] = await drill.query(
      `SELECT count(*)::int AS n, count(DISTINCT key)::int AS keys FROM events WHERE conversation_id = $1`,
      [id],
    );
    if (events.n !== events.keys) check.doubled.push(`2: ${events.n - events.keys} events written twice`);
    return {
      broken: `PostgreSQL stopped for ${POSTGRES_DOWN_MS / 1000} s after a model call started`,
      downMs: back - stopped,
      recoveryMs,
      turns: 1,
      answered,
      lost: [...lost, ...check.lost],
      doubled: check.doubled,
      notes,
    };
  },
};

// ---- 3: the API killed with SSE clients connected ----

interface StreamEvent {
  id: number;
  type: string;
}

/** Follows an SSE stream until it ends (the API died), `until` holds, or the time runs out. */
async function follow(
  drill: DrillCluster,
  id: string,
  lastEventId: number,
  until: (events: StreamEvent[]) => boolean,
  timeoutMs = 30_000,
): Promise<{ events: StreamEvent[]; ended: 'until' | 'closed' | 'timeout' }> {
  const events: StreamEvent[] = [];
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(`${drill.cluster.apiUrl}/v1/conversations/${id}/events`, {
      headers: { authorization: `Bearer ${DRILL_TOKEN}`, ...(lastEventId ? { 'Last-Event-ID': String(lastEventId) } : {}) },
      signal: controller.signal,
    });
    if (response.status !== 200) throw new Error(`SSE answered ${response.status}`);
    for await (const frame of sseFrames(response.body!)) {
      if (frame.id !== undefined) events.push({ id: Number(frame.id), type: frame.event ?? '' });
      if (until(events)) return { events, ended: 'until' };
    }
    return { events, ended: 'closed' };
  } catch (error) {
    if (controller.signal.aborted) return { events, ended: 'timeout' };
    return { events, ended: 'closed' };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

const SSE_CLIENTS = 5;

const apiKilled: Drill = {
  id: 3,
  name: 'API killed with SSE clients connected',
  async run(drill, log) {
    const notes: string[] = [];
    const { api } = drill.cluster;
    const id = await drill.openConversation('drill 3');
    // A finished turn first, so the streams have a past to replay as well as a present.
    const first = await drill.post(`/v1/conversations/${id}/messages`, { text: 'hello [3]' });
    const hold = drill.model.hold('[3b]');
    const ended = (events: StreamEvent[]) => events.filter((event) => event.type === 'turn.ended').length >= 2;
    const clients = Array.from({ length: SSE_CLIENTS }, () => follow(drill, id, 0, ended, 60_000));
    const key = crypto.randomUUID();
    const turn = drill.call('POST', `/v1/conversations/${id}/messages`, {
      body: { text: 'status of order 24601 [3b]' },
      headers: { 'Idempotency-Key': key },
    });
    await hold.reached;
    await sleep(200); // the streams have delivered what exists so far
    const killed = now();
    await api.kill();
    log(`drill 3: API SIGKILLed with ${SSE_CLIENTS} SSE clients connected, mid-turn; the turn goes on while it is down`);
    hold.release();
    const before = await Promise.all(clients);
    const cut = await turn; // the POST's connection died with the API
    await sleep(500); // the worker finishes the turn while no API is there to see it
    await api.start();
    const back = now();
    // Each client reconnects from its Last-Event-ID; the careful client retries its POST with the same key.
    const after = await Promise.all(
      before.map(({ events }) => follow(drill, id, events.at(-1)?.id ?? 0, (more) => ended([...events, ...more]), 30_000)),
    );
    const recoveryMs = now() - back;
    const retried = await drill.post(`/v1/conversations/${id}/messages`, { text: 'status of order 24601 [3b]' }, { key });
    const full = await follow(drill, id, 0, ended, 30_000);

    const lost: string[] = [];
    const doubled: string[] = [];
    const fullIds = full.events.map((event) => event.id);
    before.forEach((part, index) => {
      if (part.ended !== 'closed') notes.push(`3: client ${index + 1}'s first stream ended by ${part.ended}, not by the API's death`);
      const seen = [...part.events, ...after[index]!.events].map((event) => event.id);
      const unique = new Set(seen);
      if (unique.size !== seen.length) doubled.push(`3: client ${index + 1} saw ${seen.length - unique.size} event(s) twice`);
      const missing = fullIds.filter((eventId) => !unique.has(eventId));
      if (missing.length) lost.push(`3: client ${index + 1} missed events ${missing.join(', ')}`);
      if (seen.join(',') !== fullIds.join(',') && !missing.length && unique.size === seen.length)
        lost.push(`3: client ${index + 1} saw the events out of order`);
    });
    let answered = first.status === 200 ? 1 : 0;
    if (retried.status === 200 && /answered get_order_by_id/.test(retried.body.messages?.at(-1)?.text ?? '')) answered++;
    else notes.push(`3: the retried POST answered ${retried.status} ${JSON.stringify(retried.body).slice(0, 200)}`);
    notes.push(
      `3: the POST in flight got ${cut.status === 0 ? 'a dropped connection' : cut.status}; ${before[0]!.events.length} events before the kill, ${after[0]!.events.length} after, ${fullIds.length} in all`,
    );
    const check = await turnsOk(drill, id, { user: 2, assistant: 3, tool: 1, toolCalls: 1, modelCalls: 3 }, '3');
    return {
      broken: `API SIGKILL + restart, ${SSE_CLIENTS} SSE clients connected, a turn running`,
      downMs: back - killed,
      recoveryMs,
      turns: 2,
      answered,
      lost: [...lost, ...check.lost],
      doubled: [...doubled, ...check.doubled],
      notes,
    };
  },
};

// ---- 4: two workers, one killed mid save pipeline, the other during the beer agent's 30 s wait ----

/** The beer agent's BEER_CONFIRMATION_TIMEOUT, left at its default in the drill cluster. */
export const BEER_WAIT_MS = 30_000;
/** how far from 30 s the confirmation may end, by the events' timestamps */
export const BEER_WAIT_TOLERANCE_MS = 2_000;
/** a fixture client in San Diego: the fake OpenBreweryDB has new breweries for it */
const BEER_CLIENT = 'CLT-CCW784';
const DRILL_RECIPE =
  'Drill Four Sour [4a]. Ingredients: 2 oz bourbon, 1 oz lemon juice, 3/4 oz simple syrup. ' +
  'Instructions: 1) Shake with ice, 2) Strain into a rocks glass. Prep time: 5 minutes. Serves: 1. Type: cocktail.';
const SAVE_PROGRESS = ['structure', 'image_prompt', 'image', 'upload', 'insert'].flatMap((step) => [`${step}:started`, `${step}:done`]);

const pidOf = (identity: string | undefined) => Number((identity ?? '').split('@')[0]);

async function eventually<T>(what: string, find: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not there after ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

const workersKilled: Drill = {
  id: 4,
  name: "two workers: one killed mid save pipeline, one during the beer agent's 30 s wait",
  async run(drill, log) {
    const notes: string[] = [];
    const lost: string[] = [];
    const doubled: string[] = [];
    const wrong: string[] = [];
    const { workers } = drill.cluster;
    if (workers.length < 2) throw new Error('drill 4 needs two workers');
    const killed = new Set<ManagedProcess>();
    let turns = 0;
    let answered = 0;
    try {
      // ---- a) the save pipeline: the image model call in flight on one worker when it dies ----
      const a = await drill.openConversation('drill 4a', { agent: 'recipes' });
      const asked = await drill.post(`/v1/conversations/${a}/messages`, { text: `save this recipe: ${DRILL_RECIPE}` });
      turns++;
      const approval = asked.body.pending?.[0];
      if (asked.status !== 200 || approval?.tool !== 'save_recipe')
        throw new Error(`drill 4a: no approval pending: ${asked.status} ${JSON.stringify(asked.body).slice(0, 300)}`);
      answered++;
      const hold = drill.model.hold('[4a]', 'image');
      const decision = drill.post(`/v1/conversations/${a}/decisions`, { pendingId: approval.id, decision: 'approve' });
      turns++;
      const reached = await Promise.race([hold.reached.then(() => true), decision.then(() => false), sleep(60_000).then(() => false)]);
      if (!reached) {
        const progress = await drill.query(
          `SELECT data->>'step' AS step, data->>'state' AS state, data->>'message' AS message FROM events WHERE conversation_id = $1 AND type = 'progress' ORDER BY id`,
          [a],
        );
        const seen = drill.fake.requests.slice(-6).map((request) => `${kindOf(request)} "${userTextOf(request).slice(0, 60)}"`);
        throw new Error(
          `drill 4a: the image model call was not made: progress ${JSON.stringify(progress)}; the model's last requests: ${seen.join('; ')}`,
        );
      }
      const saveWorkflowId = await eventually("drill 4a: the pipeline's workflow ID", async () => {
        const [row] = await drill.query(
          `SELECT data->>'workflowId' AS id FROM events WHERE conversation_id = $1 AND type = 'progress' LIMIT 1`,
          [a],
        );
        return row?.id as string | undefined;
      });
      const recipeId = saveWorkflowId.replace(/^save-recipe-/, '');
      const victimA = await eventually('drill 4a: the worker running generateRecipeImage', () =>
        drill.workerRunningActivity(saveWorkflowId, 'generateRecipeImage'),
      );
      const survivorA = workers.find((worker) => worker !== victimA)!;
      const victimPidA = victimA.pid;
      const killedA = now();
      await victimA.kill();
      killed.add(victimA);
      log(
        `drill 4a: ${victimA.name} SIGKILLed while its image model call for recipe ${recipeId} was held; it stays down until the save is done`,
      );
      hold.release();
      const decided = await decision;
      const recoveryA = now() - killedA;
      // The killed worker comes back while the beer conversation starts; the second kill waits for it.
      let backA = 0;
      const restartA = victimA.start().then(() => {
        backA = now();
        killed.delete(victimA);
      });
      restartA.catch(() => undefined);

      const last = decided.body.messages?.at(-1)?.text ?? '';
      const tool = (decided.body.messages ?? []).find((message: any) => message.role === 'tool');
      if (decided.status === 200 && /answered save_recipe/.test(last) && tool?.result?.status === 'saved') answered++;
      else notes.push(`4a: the decision answered ${decided.status} ${JSON.stringify(decided.body).slice(0, 300)}`);
      if (decided.attempts > 1) notes.push(`4a: the decision's POST needed ${decided.attempts} attempts (same Idempotency-Key)`);
      await drill.waitUntilIdle(a);

      const [rows] = await drill.query(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE conversation_id = $2)::int AS mine FROM saved_recipes WHERE id = $1`,
        [recipeId, a],
      );
      if (rows.n < 1) lost.push(`4a: no saved_recipes row for ${recipeId}`);
      if (rows.n > 1) doubled.push(`4a: ${rows.n} saved_recipes rows for ${recipeId}`);
      if (rows.n === 1 && rows.mine !== 1) lost.push(`4a: the row of ${recipeId} is not the conversation's`);
      const objectsDir = path.join(drill.appDataDir, 'objects');
      const stored = (await fs.readdir(path.join(objectsDir, 'recipes')).catch(() => [] as string[])).filter((name) =>
        name.startsWith(recipeId),
      );
      if (!stored.includes(`${recipeId}.png`)) lost.push(`4a: no object recipes/${recipeId}.png`);
      if (stored.length > 1) doubled.push(`4a: objects for ${recipeId}: ${stored.join(', ')}`);
      const staged = await fs.stat(path.join(objectsDir, 'staging', 'recipes', `${recipeId}.png`)).then(
        () => true,
        () => false,
      );
      if (staged) doubled.push(`4a: the staged image of ${recipeId} was left behind`);
      const served = await fetch(`${drill.cluster.apiUrl}/files/recipes/${recipeId}.png`);
      if (served.status !== 200) lost.push(`4a: the API serves recipes/${recipeId}.png with ${served.status}`);
      await served.body?.cancel();
      const toolRows = await drill.query(`SELECT result->>'status' AS status FROM messages WHERE conversation_id = $1 AND role = 'tool'`, [
        a,
      ]);
      const saved = toolRows.filter((row) => row.status === 'saved').length;
      if (saved !== 1)
        (saved ? doubled : lost).push(
          `4a: the tool result "status: saved" ${saved} times (${toolRows.map((row) => row.status).join(', ')})`,
        );
      const progress = await drill.query(
        `SELECT data->>'step' AS step, data->>'state' AS state FROM events WHERE conversation_id = $1 AND type = 'progress' ORDER BY id`,
        [a],
      );
      const steps = progress.map((row) => `${row.step}:${row.state}`);
      if (steps.join() !== SAVE_PROGRESS.join()) {
        const extra = steps.length > SAVE_PROGRESS.length;
        (extra ? doubled : lost).push(`4a: progress ${steps.join(', ')}`);
      }
      // A tool run as a child workflow is kept once by its workflow ID, not in the tool_calls ledger: 0 rows there.
      const checkA = await turnsOk(drill, a, { user: 1, assistant: 2, tool: 1, toolCalls: 0, modelCalls: 2 }, '4a');
      const historyA = await drill.history(saveWorkflowId);
      const imageStarts = historyA.filter((event) => event.type === 'ActivityTaskStarted' && event.activityType === 'generateRecipeImage');
      const finishedOn = imageStarts.at(-1);
      if (!finishedOn || pidOf(finishedOn.identity) === victimPidA || pidOf(finishedOn.identity) !== survivorA.pid) {
        wrong.push(
          `4a: the image step finished on ${finishedOn?.identity ?? 'no worker'}, not on ${survivorA.name} (pid ${survivorA.pid}); the killed one was pid ${victimPidA}`,
        );
      }
      notes.push(
        `4a: ${victimA.name} (pid ${victimPidA}) killed mid image call; the step's attempt ${finishedOn?.attempt ?? '?'} finished on ${survivorA.name} ` +
          `and the decision answered ${(recoveryA / 1000).toFixed(1)} s after the kill (the activity's 10 s heartbeat timeout)`,
      );

      // ---- b) the beer agent's 30 s "would you like details?": the conversation's worker dies while it waits ----
      const groundingBefore = drill.fake.requests.filter((request) => kindOf(request) === 'grounding').length;
      const [cacheBefore] = await drill.query(`SELECT count(*)::int AS n FROM beer_website_summaries`);
      const b = await drill.openConversation('drill 4b', { agent: 'beer', client: BEER_CLIENT });
      const recommended = await drill.post(`/v1/conversations/${b}/messages`, { text: 'recommend breweries [4b]' });
      turns++;
      const question = recommended.body.pending?.[0];
      if (recommended.status !== 200 || question?.kind !== 'confirmation') {
        throw new Error(`drill 4b: no confirmation pending: ${recommended.status} ${JSON.stringify(recommended.body).slice(0, 300)}`);
      }
      const openedAt = await eventually('drill 4b: the pending.opened event', async () => {
        const [row] = await drill.query(`SELECT created_at FROM events WHERE conversation_id = $1 AND key = $2`, [
          b,
          `pending-opened:${question.id}`,
        ]);
        return row ? (row.created_at as Date).getTime() : undefined;
      });
      const configured = Date.parse(question.expiresAt) - openedAt;
      if (Math.abs(configured - BEER_WAIT_MS) > BEER_WAIT_TOLERANCE_MS)
        wrong.push(`4b: the confirmation was opened for ${(configured / 1000).toFixed(1)} s, not 30 s`);
      await restartA;
      const workflowB = drill.workflowIdOf(b);
      const victimB = await eventually('drill 4b: the worker the conversation last ran on', () => drill.workerLastRunning(workflowB));
      const survivorB = workers.find((worker) => worker !== victimB)!;
      const victimPidB = victimB.pid;
      const killedB = now();
      const killedWallB = Date.now();
      await victimB.kill();
      killed.add(victimB);
      // The point is a worker dying with the wait still ahead: a restart of the first one so slow that the
      // kill came near the deadline proves nothing, and says so.
      if (killedWallB - openedAt > BEER_WAIT_MS - 5_000)
        wrong.push(`4b: the kill came ${((killedWallB - openedAt) / 1000).toFixed(1)} s into the 30 s wait, too late to test it`);
      log(
        `drill 4b: ${victimB.name} (the conversation's last worker) SIGKILLed ${((killedWallB - openedAt) / 1000).toFixed(1)} s into the 30 s wait; ` +
          `nobody answers, it stays down until the turn is over`,
      );
      await drill.waitUntilIdle(b, BEER_WAIT_MS + 60_000);
      const idleAt = now();
      await victimB.start();
      const backB = now();
      killed.delete(victimB);

      const pendingRows = await drill.query(
        `SELECT type, data, created_at FROM events WHERE conversation_id = $1 AND type IN ('pending.opened', 'pending.closed') ORDER BY id`,
        [b],
      );
      const closedRows = pendingRows.filter((row) => row.type === 'pending.closed');
      const openedRows = pendingRows.filter((row) => row.type === 'pending.opened');
      if (openedRows.length !== 1 || closedRows.length > 1)
        doubled.push(`4b: ${openedRows.length} pending.opened, ${closedRows.length} pending.closed`);
      const closed = closedRows[0];
      let waitedMs = NaN;
      if (!closed) lost.push('4b: no pending.closed event');
      else {
        waitedMs = (closed.created_at as Date).getTime() - openedAt;
        if (closed.data.timedOut !== true) wrong.push(`4b: the confirmation closed as ${JSON.stringify(closed.data)}, not timed out`);
        if (Math.abs(waitedMs - BEER_WAIT_MS) > BEER_WAIT_TOLERANCE_MS) {
          wrong.push(
            `4b: the confirmation timed out ${(waitedMs / 1000).toFixed(1)} s after it opened, not 30 s (±${BEER_WAIT_TOLERANCE_MS / 1000} s)`,
          );
        }
      }
      const grounded = drill.fake.requests.filter((request) => kindOf(request) === 'grounding').length - groundingBefore;
      if (grounded) wrong.push(`4b: ${grounded} grounding call(s) with no answer given`);
      const [cacheAfter] = await drill.query(`SELECT count(*)::int AS n FROM beer_website_summaries`);
      if (cacheAfter.n !== cacheBefore.n) wrong.push(`4b: the summary cache went from ${cacheBefore.n} to ${cacheAfter.n} entries`);
      const beerTools = await drill.query(`SELECT result FROM messages WHERE conversation_id = $1 AND role = 'tool'`, [b]);
      const [ended] = await drill.query(
        `SELECT count(*)::int AS n, max(created_at) AS at FROM events WHERE conversation_id = $1 AND type = 'turn.ended'`,
        [b],
      );
      const [finalAnswer] = await drill.query(
        `SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1 AND role = 'assistant' AND text LIKE 'answered recommend_breweries%'`,
        [b],
      );
      if (beerTools.length === 1 && beerTools[0].result?.answer === 'timeout' && finalAnswer.n === 1 && ended.n === 1) answered++;
      else
        notes.push(
          `4b: tool results ${JSON.stringify(beerTools.map((row) => row.result?.answer ?? row.result?.status))}, ${finalAnswer.n} final answers, ${ended.n} turn.ended`,
        );
      if (ended.n > 1) doubled.push(`4b: turn.ended ${ended.n} times`);
      const checkB = await turnsOk(drill, b, { user: 1, assistant: 2, tool: 1, toolCalls: 0, modelCalls: 2 }, '4b');
      // After the kill, every workflow task of the conversation and of its recommendation ran on the other worker.
      const childId = beerTools[0]?.result?.workflow_id as string | undefined;
      for (const workflowId of [workflowB, ...(childId ? [childId] : [])]) {
        const after = (await drill.history(workflowId)).filter((event) => event.type === 'WorkflowTaskCompleted' && event.at > killedWallB);
        const elsewhere = after.filter((event) => pidOf(event.identity) !== survivorB.pid);
        if (!after.length || elsewhere.length) {
          wrong.push(
            `4b: ${workflowId} after the kill: ${after.length} workflow tasks, ${elsewhere.length} not on ${survivorB.name} (${elsewhere.map((event) => event.identity).join(', ')})`,
          );
        }
      }
      // From the deadline (opened + 30 s) until the turn's answer was written: what the kill cost the wait.
      const lateMs = ended.at ? (ended.at as Date).getTime() - (openedAt + BEER_WAIT_MS) : NaN;
      notes.push(
        `4b: ${victimB.name} (pid ${victimPidB}) killed ${((killedWallB - openedAt) / 1000).toFixed(1)} s into the wait; the confirmation timed out ` +
          `${(waitedMs / 1000).toFixed(2)} s after pending.opened, the turn's answer ${(lateMs / 1000).toFixed(2)} s after the deadline, on ${survivorB.name}; ` +
          `${grounded} grounding calls; idle ${((idleAt - killedB) / 1000).toFixed(1)} s after the kill`,
      );

      return {
        broken: `a worker SIGKILLed (a) mid save pipeline (image model call), (b) ${((killedWallB - openedAt) / 1000).toFixed(0)} s into the beer agent's 30 s wait`,
        downMs: Math.max(backA - killedA, backB - killedB),
        recoveryMs: Math.max(recoveryA, lateMs),
        turns,
        answered,
        lost: [...lost, ...checkA.lost, ...checkB.lost],
        doubled: [...doubled, ...checkA.doubled, ...checkB.doubled],
        wrong,
        notes,
      };
    } finally {
      // Whatever happened, the next drill gets both workers.
      for (const worker of killed)
        if (!worker.running)
          await worker.start().catch((error: Error) => log(`drill 4: ${worker.name} did not start again: ${error.message}`));
    }
  },
};

// ---- 5: a burst of 500 turns over 50 conversations while a worker restarts ----

export const BURST = { conversations: 50, turnsEach: 10, restartAfter: 100 };

const ORDER_IDS = ['24601', '97531', '86420', '54321', '74651', '30298', '61984', '58243', '90357'];

const burstWithWorkerRestart: Drill = {
  id: 5,
  name: `burst of ${BURST.conversations * BURST.turnsEach} turns over ${BURST.conversations} conversations, a worker restarted`,
  async run(drill, log) {
    const notes: string[] = [];
    const worker = drill.cluster.workers[0]!;
    const ids = await Promise.all(Array.from({ length: BURST.conversations }, (_, i) => drill.openConversation(`drill 5 #${i}`)));
    let done = 0;
    let killedAt: number | undefined;
    let backAt: number | undefined;
    let restart: Promise<void> | undefined;
    const inFlightAtKill = new Set<string>();
    const inFlight = new Set<string>();
    let lastOfInFlight = 0;
    const failures: string[] = [];
    const wrong: string[] = [];
    const latencies: number[] = [];
    const retried: string[] = [];
    let firstError: string | undefined;
    const started = now();
    await Promise.all(
      ids.map(async (id, c) => {
        for (let k = 1; k <= BURST.turnsEach; k++) {
          const text = `status of order ${ORDER_IDS[(c + k) % ORDER_IDS.length]} (turn ${k} of ${id.slice(0, 8)})`;
          const tag = `${id}#${k}`;
          inFlight.add(tag);
          const sent = now();
          const statuses: number[] = [];
          const result = await drill.post(
            `/v1/conversations/${id}/messages`,
            { text },
            {
              timeoutMs: 120_000,
              onRetry: (status, body) => {
                statuses.push(status);
                if (status !== 503 && !firstError) firstError = `${status} ${JSON.stringify(body).slice(0, 200)}`;
              },
            },
          );
          latencies.push(now() - sent);
          if (result.attempts > 1) {
            retried.push(
              `${tag.slice(0, 8)}#${k} answered ${[...new Set(statuses)].join('/')} ${statuses.length}x${inFlightAtKill.has(tag) ? ' (in flight at the kill)' : ''}`,
            );
          }
          inFlight.delete(tag);
          if (inFlightAtKill.has(tag)) lastOfInFlight = now();
          if (result.status !== 200) {
            failures.push(`${tag}: ${result.status} ${JSON.stringify(result.body).slice(0, 120)}`);
            continue;
          }
          const last = result.body.messages?.at(-1)?.text ?? '';
          if (!last.includes(`(turn ${k} of ${id.slice(0, 8)})`)) wrong.push(`${tag}: answered "${last.slice(0, 80)}"`);
          done++;
          if (done === BURST.restartAfter && !restart) {
            killedAt = now();
            for (const tag of inFlight) inFlightAtKill.add(tag);
            log(`drill 5: ${done} turns answered; SIGKILL ${worker.name} with ${inFlight.size} turns in flight, and start it again`);
            restart = worker
              .kill()
              .then(() => worker.start())
              .then(() => void (backAt = now()));
          }
        }
      }),
    );
    await restart;
    const wallMs = now() - started;
    const sorted = [...latencies].sort((a, b) => a - b);
    const at = (q: number) => ((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) / 1000).toFixed(2);
    notes.push(
      `5: ${((done / wallMs) * 1000).toFixed(0)} turns/s over the burst; turn latency p50 ${at(0.5)} s, p99 ${at(0.99)} s, max ${at(1)} s; ` +
        `${inFlightAtKill.size} turns were in flight at the kill; ${retried.length} POSTs were retried${retried.length ? ` (${retried.slice(0, 5).join(', ')})` : ''}` +
        (firstError ? `; the first answer other than 503 that made a client retry: ${firstError}` : ''),
    );
    const apiErrors = drill.cluster.api
      .lastLines()
      .split('\n')
      .filter((line) => /\b500\b|Error/.test(line));
    if (apiErrors.length) notes.push(`5: the API logged: ${apiErrors.slice(0, 3).join(' | ').slice(0, 600)}`);
    const lost: string[] = [...failures.map((f) => `5: ${f}`), ...wrong.map((w) => `5: ${w}`)];
    const doubled: string[] = [];
    // Every conversation's transcript: for each turn, user, assistant (the call), tool, assistant (the answer), in order.
    const rows = await drill.query<{ conversation_id: string; role: string; text: string; tool: string | null }>(
      `SELECT conversation_id, role, text, tool FROM messages WHERE conversation_id = ANY($1::uuid[]) ORDER BY conversation_id, seq`,
      [ids],
    );
    const byConversation = new Map<string, typeof rows>();
    for (const row of rows) byConversation.set(row.conversation_id, [...(byConversation.get(row.conversation_id) ?? []), row]);
    for (const id of ids) {
      const transcript = byConversation.get(id) ?? [];
      const expectedRoles = Array.from({ length: BURST.turnsEach }, () => ['user', 'assistant', 'tool', 'assistant']).flat();
      const roles = transcript.map((row) => row.role);
      if (roles.length < expectedRoles.length) lost.push(`5: ${id.slice(0, 8)} has ${roles.length}/${expectedRoles.length} messages`);
      if (roles.length > expectedRoles.length) doubled.push(`5: ${id.slice(0, 8)} has ${roles.length}/${expectedRoles.length} messages`);
      if (roles.length === expectedRoles.length && roles.join() !== expectedRoles.join())
        lost.push(`5: ${id.slice(0, 8)}'s transcript is out of order`);
      transcript
        .filter((row) => row.role === 'user')
        .forEach((row, k) => {
          if (!row.text.includes(`(turn ${k + 1} of`)) lost.push(`5: ${id.slice(0, 8)} user message ${k + 1} is "${row.text}"`);
        });
    }
    const [totals] = await drill.query(
      `SELECT (SELECT count(*) FROM tool_calls WHERE conversation_id = ANY($1::uuid[]))::int AS tools,
              (SELECT count(*) FROM model_usage WHERE conversation_id = ANY($1::uuid[]))::int AS models`,
      [ids],
    );
    const turns = BURST.conversations * BURST.turnsEach;
    const counted = compareCounts('5', { toolCalls: turns, modelCalls: 2 * turns }, { toolCalls: totals.tools, modelCalls: totals.models });
    return {
      broken: `${worker.name} SIGKILLed after ${BURST.restartAfter} of ${turns} turns, started again at once`,
      downMs: backAt && killedAt ? backAt - killedAt : 0,
      recoveryMs: killedAt ? Math.max(0, lastOfInFlight - killedAt) : 0,
      turns,
      answered: done,
      lost: [...lost, ...counted.lost],
      doubled: [...doubled, ...counted.doubled],
      notes,
    };
  },
};

export const DRILLS: Drill[] = [temporalKilled, postgresStopped, apiKilled, workersKilled, burstWithWorkerRestart];
