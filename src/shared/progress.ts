// The data of a `progress` event: which step of which child workflow, and how it went. One shape for every
// child workflow (the recipe save, the brewery recommendation), so a client shows any of them the same way.
import { z } from 'zod';

/** stopped: the person pressed Stop, and the run ended there */
export const ProgressState = z.enum(['started', 'done', 'failed', 'skipped', 'stopped']);
export type ProgressState = z.infer<typeof ProgressState>;

export const Progress = z.object({
  workflowId: z.string(),
  step: z.string(),
  /** 1-based */
  index: z.number().int().min(1),
  of: z.number().int().min(1),
  state: ProgressState,
  /** what came of the step, or why it failed or was skipped */
  message: z.string().optional(),
  /** every step's name in order, so a client names the steps that have not reported yet */
  steps: z.array(z.string()).optional(),
});
export type Progress = z.infer<typeof Progress>;
