// The baselines bench/turns.ts measures beside Brigade, on the same Temporal server in the same run, each with a
// worker of its own (in the bench's process, as Brigade's is) on a task queue of its own:
//   floor: bare Temporal, a workflow whose Update runs one no-op activity and returns (bench/workflows/floor.ts)
//   floor-local: the same with the no-op as a local activity, run inside the workflow task as Brigade's model
//           step is (floorLocalSession, same file)
//   bare-turn: floor-local whose local activity runs the in-process turn (the step's own work) that the bench
//           hands it: the limit as one program, Brigade's shape with nothing of Brigade's runtime
//   ai-sdk: the lookup turn as Temporal's AI SDK integration builds it (bench/workflows/peer.ts): generateText
//           with the model as an activity (AiSdkPlugin, @ai-sdk/google against the bench's Gemini-wire server)
//           and the tool as an activity that reads the order from the same PostgreSQL
// Every worker uses Worker.create's defaults, as Brigade's createWorker does.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import type pg from 'pg';
import { bareTurnUpdate, floorDoneSignal, floorTurnUpdate } from './workflows/floor.ts';
import { peerDoneSignal, peerSendUpdate } from './workflows/peer.ts';

export interface Baseline {
  name: 'floor' | 'floor-local' | 'bare-turn' | 'ai-sdk';
  open(count: number): Promise<WorkflowHandle[]>;
  /** one turn; resolves with its latency in ms */
  turn(handle: WorkflowHandle, text: string): Promise<number>;
  /** runs its worker (it polls only while running) */
  run(): void;
  stop(): Promise<void>;
}

type BaselineDeps = { client: Client; address: string; namespace: string };

async function baseline(
  name: Baseline['name'],
  deps: BaselineDeps,
  worker: (connection: NativeConnection, taskQueue: string) => Promise<Worker>,
  workflowType: string,
  send: (handle: WorkflowHandle, text: string) => Promise<unknown>,
  done: (handle: WorkflowHandle) => Promise<void>,
): Promise<Baseline> {
  const connection = await NativeConnection.connect({ address: deps.address });
  const taskQueue = `bench-${name}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const w = await worker(connection, taskQueue);
  const handles: WorkflowHandle[] = [];
  let running: Promise<void> | undefined;
  return {
    name,
    async open(count) {
      const opened = await Promise.all(
        Array.from({ length: count }, () =>
          deps.client.workflow.start(workflowType, { workflowId: `bench-${name}-${randomUUID()}`, taskQueue, args: [] }),
        ),
      );
      handles.push(...opened);
      return opened;
    },
    async turn(handle, text) {
      const started = performance.now();
      await send(handle, text);
      return performance.now() - started;
    },
    run() {
      running ??= w.run();
    },
    async stop() {
      await Promise.allSettled(handles.map((handle) => done(handle)));
      // A worker that never ran still holds the connection: run it to shut it down.
      running ??= w.run();
      if (w.getState() === 'RUNNING') w.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    },
  };
}

/** a worker of bench/workflows/floor.ts's workflows with these activities */
const floorWorker = (namespace: string, activities: object) => (connection: NativeConnection, taskQueue: string) =>
  Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflows/floor.ts', import.meta.url)),
    activities,
  });

/** The floor; `local`: its step as a local activity (floor-local), on a worker and task queue of its own. */
export function startFloor(deps: BaselineDeps, local = false): Promise<Baseline> {
  return baseline(
    local ? 'floor-local' : 'floor',
    deps,
    floorWorker(deps.namespace, { noop: async (turn: number) => turn }),
    local ? 'floorLocalSession' : 'floorSession',
    (handle, text) => handle.executeUpdate(floorTurnUpdate, { args: [text.length] }),
    (handle) => handle.signal(floorDoneSignal),
  );
}

/** bare-turn: `turn` does one turn of the conversation the workflow id stands for, as the in-process side does. */
export function startBareTurn(deps: BaselineDeps, turn: (workflowId: string, text: string) => Promise<void>): Promise<Baseline> {
  return baseline(
    'bare-turn',
    deps,
    floorWorker(deps.namespace, {
      bareTurn: (text: string) => turn(Context.current().info.workflowExecution!.workflowId, text),
    }),
    'bareTurnSession',
    (handle, text) => handle.executeUpdate(bareTurnUpdate, { args: [text] }),
    (handle) => handle.signal(floorDoneSignal),
  );
}

export function startAiSdkPeer(deps: {
  client: Client;
  address: string;
  namespace: string;
  pool: pg.Pool;
  geminiBaseUrl: string;
}): Promise<Baseline> {
  const google = createGoogleGenerativeAI({ apiKey: 'bench', baseURL: `${deps.geminiBaseUrl}/v1beta` });
  return baseline(
    'ai-sdk',
    deps,
    (connection, taskQueue) =>
      Worker.create({
        connection,
        namespace: deps.namespace,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('./workflows/peer.ts', import.meta.url)),
        plugins: [new AiSdkPlugin({ modelProvider: google })],
        activities: {
          // the same statement as Brigade's get_order_by_id (src/agents/support/implementations.ts)
          getOrderById: async ({ order_id }: { order_id: string }) => {
            const { rows } = await deps.pool.query({
              name: 'peer.order_by_id',
              text: 'SELECT * FROM orders WHERE id = $1',
              values: [order_id],
            });
            return rows[0] ?? { error: 'Order not found' };
          },
        },
      }),
    'peerSession',
    async (handle, text) => {
      const result = await handle.executeUpdate(peerSendUpdate, { args: [text] });
      if (!result.text) throw new Error(`the ai-sdk turn "${text}" returned no text`);
      return result;
    },
    (handle) => handle.signal(peerDoneSignal),
  );
}
