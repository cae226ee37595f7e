// The runtime's record activity as workflows call it: a local activity (a short transaction, idempotent by
// event key), retried well past a database blip. One definition for chatSession and the child workflows.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { LocalActivityOptions } from '@temporalio/common';
import type { RuntimeActivities } from '../activities/runtime-types.ts';

export const BOOKKEEPING_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 10, initialInterval: '200ms', maximumInterval: '5s' },
};

export const bookkeepingActivities = () => proxyLocalActivities<RuntimeActivities>(BOOKKEEPING_OPTIONS);
