// How the workflow runs a model step: within its workflow task first (a local activity), then, if the step
// outran the task, followed on its worker's own queue (src/activities/step-handoff.ts), and if that worker let
// it go (it died or shut down), run again as a regular activity whose attempts go on from the lost one's.
import { ActivityFailure, ApplicationFailure, TimeoutFailure, patched } from '@temporalio/workflow';
import type { ModelStepInput, ModelStepResult } from '../activities/runtime-types.ts';
import { STEP_LOST } from '../shared/turn-control.ts';
import { MODEL_STEP_IN_TASK, type SessionActivities } from './session-activities.ts';

/**
 * `seen` is handed every step's result before the caller gets it. The common path, a step that ends within its
 * task, costs one promise: each promise a workflow makes costs it a stack the SDK records (docs/performance.md).
 */
export function modelSteps(activities: SessionActivities, seen: (result: ModelStepResult) => ModelStepResult) {
  return function modelStep(summary: string, input: ModelStepInput): Promise<ModelStepResult> {
    if (!patched(MODEL_STEP_IN_TASK)) return activities.model.modelStep.executeWithOptions({ summary }, [input]).then(seen);
    return activities.modelInTask.modelStep
      .executeWithOptions({ summary }, [input])
      .then((result) => (result.handedOff ? followHandedOff(summary, input, result.handedOff).then(seen) : seen(result)));
  };

  async function followHandedOff(
    summary: string,
    input: ModelStepInput,
    { taskQueue, key, attempt }: NonNullable<ModelStepResult['handedOff']>,
  ): Promise<ModelStepResult> {
    try {
      // what an operator reads beside the pending activity: whose step, and since when (the hand-off's time)
      const since = `${summary}; conversation ${input.conversationId}, running since ${new Date().toISOString()}`;
      return await activities.follow(taskQueue).followModelStep.executeWithOptions({ summary: since }, [key]);
    } catch (error) {
      if (!lostWithItsWorker(error)) throw error;
      return activities.model.modelStep.executeWithOptions({ summary }, [{ ...input, attemptBase: attempt }]);
    }
  }
}

function lostWithItsWorker(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  const cause = error.cause;
  return cause instanceof TimeoutFailure || (cause instanceof ApplicationFailure && cause.type === STEP_LOST);
}
