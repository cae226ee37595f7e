// How a model step run as a regular activity stays reachable: it heartbeats on a clock, and a heartbeat's answer
// is how a Stop reaches it.
import type { Context } from '@temporalio/activity';

/** How often a model step heartbeats: the longest a Stop waits to reach it, once the server has it. */
export const STOP_HEARTBEAT_MS = 250;

/**
 * Heartbeat on a clock, not on tokens: a model that thinks long before its first token is alive, while a
 * worker that died stops heartbeating and its attempt is retried without waiting out the timeout. Often,
 * too: a heartbeat's answer is how a Stop reaches the step (the worker's heartbeat throttle is as short, see
 * stack/worker.ts), and Stop should close the model's stream within a second.
 */
export function heartbeatOnClock(context: Context): () => void {
  const beat = setInterval(
    () => context.heartbeat(),
    Math.min(STOP_HEARTBEAT_MS, Math.max(100, (context.info.heartbeatTimeoutMs ?? 3000) / 3)),
  );
  return () => clearInterval(beat);
}

/** Cancelled because the workflow asked (Stop), not because the worker shuts down or the activity timed out. */
export function cancelledByWorkflow(context: Context): boolean {
  if (!context.cancellationSignal.aborted) return false;
  // a local activity's cancellation carries only its reason
  if (context.info.isLocal) return (context.cancellationSignal.reason as Error | undefined)?.message === 'CANCELLED';
  return context.cancellationDetails?.cancelRequested === true;
}
