// The bare-Temporal floor of bench/turns.ts: the least a turn on Temporal can be. A long-running workflow per
// conversation whose `turn` Update runs one activity that does nothing and returns. Brigade's lookup turn does
// more (a model step that runs the tool itself, its bookkeeping in PostgreSQL), so the bench reports its costs
// as ratios to this one's, measured on the same server in the same run.
import { condition, defineSignal, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';

export interface FloorActivities {
  noop(turn: number): Promise<number>;
}

export const floorTurnUpdate = defineUpdate<number, [number]>('turn');
export const floorDoneSignal = defineSignal('done');

const { noop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function floorSession(): Promise<void> {
  let done = false;
  setHandler(floorTurnUpdate, (turn) => noop(turn));
  setHandler(floorDoneSignal, () => void (done = true));
  await condition(() => done);
}
