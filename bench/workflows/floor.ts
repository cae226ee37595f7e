// The bare-Temporal floor of bench/turns.ts: the least a turn on Temporal can be. A long-running workflow per
// conversation whose `turn` Update runs one activity that does nothing and returns. Brigade's lookup turn does
// more (a model step that runs the tool itself, its bookkeeping in PostgreSQL), so the bench reports its costs
// as ratios to this one's, measured on the same server in the same run.
//
// floorLocalSession is the same floor with its no-op step as a local activity (issue 43): the shape of a step run
// inside the workflow task, as Brigade's model step is. It costs less than the regular floor (no activity task,
// one workflow task per turn), so a Brigade whose step moved into the workflow task is also set against the
// cheapest floor of its own shape, and a change of shape cannot beat the limit it is judged by.
//
// bareTurnSession is floor-local whose local activity does the step's own work (the in-process turn: the model
// calls, the tool, the commits): the limit run as one program, what a Temporal program of Brigade's shape costs
// here built the plainest way, measured rather than summed from two sides measured apart.
import { condition, defineSignal, defineUpdate, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';

export interface FloorActivities {
  noop(turn: number): Promise<number>;
}

export interface BareTurnActivities {
  /** one whole turn of the workflow's conversation (its workflow id names it) */
  bareTurn(text: string): Promise<void>;
}

export const floorTurnUpdate = defineUpdate<number, [number]>('turn');
export const bareTurnUpdate = defineUpdate<void, [string]>('say');
export const floorDoneSignal = defineSignal('done');

const { noop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

async function session(install: () => void): Promise<void> {
  let done = false;
  install();
  setHandler(floorDoneSignal, () => void (done = true));
  await condition(() => done);
}

export async function floorSession(): Promise<void> {
  await session(() => setHandler(floorTurnUpdate, (turn) => noop(turn)));
}

export async function floorLocalSession(): Promise<void> {
  await session(() => setHandler(floorTurnUpdate, (turn) => local.noop(turn)));
}

const { bareTurn } = proxyLocalActivities<BareTurnActivities>({ startToCloseTimeout: '1 minute' });

export async function bareTurnSession(): Promise<void> {
  await session(() => setHandler(bareTurnUpdate, (text) => bareTurn(text)));
}
