// The retention sweep (src/protection/retention.ts), started by its Temporal Schedule: one activity that
// erases what is past its retention. A workflow of its own so that each sweep is visible in the Web UI.
import { proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities, SweepReport } from '../shared/retention.ts';

const { sweepRetention } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 5, initialInterval: '10s' },
});

export async function retentionSweep(): Promise<SweepReport> {
  return sweepRetention();
}
