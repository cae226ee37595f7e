// A model step begins within the workflow task that asks for it (a local activity: a short turn costs the server
// one workflow task). One still running after MODEL_STEP_HANDOFF_AFTER leaves the task: the local activity
// answers that it handed the step off, and the workflow follows it with an activity on this worker's own task
// queue (this process holds the model's stream), which waits for the step, heartbeating. The workflow task then
// completes, so the history gains no workflow-task heartbeats however long the answer streams, and operators
// see the step as a pending activity. A worker that died with the step serves that queue no more: the follow-up's
// schedule-to-start or heartbeat timeout tells the workflow to run the step again (workflows/model-steps.ts).
import { ApplicationFailure, Context } from '@temporalio/activity';
import { STEP_LOST } from '../shared/turn-control.ts';
import type { ModelStepResult } from './runtime-types.ts';
import { cancelledByWorkflow, heartbeatOnClock } from './step-heartbeat.ts';

/** How a follow-up's cancellation reaches the step it follows. */
export interface FollowStop {
  readonly signal: AbortSignal;
  /** the workflow asked (Stop), not a shutdown */
  byUser(): boolean;
}

interface Running {
  result: Promise<ModelStepResult>;
  stop(byUser: boolean): void;
  orphaned: NodeJS.Timeout;
}

/** How long a handed-off step waits for its follow-up before it is given up (the task that got the answer was lost). */
const FOLLOW_WAIT_MS = 60_000;

export class StepHandoffs {
  readonly #running = new Map<string, Running>();
  readonly taskQueue: string;
  readonly afterMs: number;

  constructor(taskQueue: string, afterMs: number) {
    this.taskQueue = taskQueue;
    this.afterMs = afterMs;
  }

  /** Runs `step`: its result when it ends within afterMs, otherwise a hand-off the workflow follows. */
  async run(key: string, attempt: number, step: (follow: FollowStop) => Promise<ModelStepResult>): Promise<ModelStepResult> {
    const controller = new AbortController();
    let userStop = false;
    const follow: FollowStop = { signal: controller.signal, byUser: () => userStop };
    const result = step(follow);
    let timer: NodeJS.Timeout | undefined;
    const due = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), this.afterMs)));
    const first = await Promise.race([result, due]).finally(() => clearTimeout(timer));
    if (first) return first;
    // settled by its follow-up; a step nobody follows must not fail the process unhandled
    result.catch(() => undefined);
    const stop = (byUser: boolean) => {
      userStop = byUser;
      controller.abort(new Error(byUser ? 'Stopped' : 'The worker let the model step go'));
    };
    const orphaned = setTimeout(() => {
      this.#running.delete(key);
      stop(false);
    }, FOLLOW_WAIT_MS);
    this.#running.set(key, { result, stop, orphaned });
    return {
      message: { id: '', role: 'assistant', text: '' },
      usage: { model: '', inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      handedOff: { taskQueue: this.taskQueue, key, attempt },
    };
  }

  /** The follow-up activity: the step's own outcome, once it ends. */
  readonly follow = async (key: string): Promise<ModelStepResult> => {
    const context = Context.current();
    const running = this.#running.get(key);
    if (!running) throw lost('The model step is no longer running on its worker');
    clearTimeout(running.orphaned);
    const release = heartbeatOnClock(context);
    // a Stop closes the stream; a shutdown lets the step go, and the workflow runs it again elsewhere
    const onCancel = () => running.stop(cancelledByWorkflow(context));
    context.cancellationSignal.addEventListener('abort', onCancel, { once: true });
    try {
      return await running.result.catch((error: unknown) => {
        if (context.cancellationSignal.aborted && !cancelledByWorkflow(context)) throw lost('The worker running the model step shut down');
        throw error;
      });
    } finally {
      release();
      context.cancellationSignal.removeEventListener('abort', onCancel);
      this.#running.delete(key);
    }
  };
}

const lost = (message: string) => ApplicationFailure.create({ type: STEP_LOST, message, nonRetryable: true });
