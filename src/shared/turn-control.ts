// Turn control shapes shared by the API, the workflow and the model step: what Stop answers, and how a
// model step that Stop cancelled hands back the reply it had streamed so far.
import type { ChatMessage } from './messages.ts';

export interface StopResult {
  /** whether a turn was running (or parked) and is now ended; false when the conversation was idle */
  stopped: boolean;
}

/** The message of the CancelledFailure a model step throws when Stop cancelled it; its details carry StoppedStep. */
export const STEP_STOPPED = 'STEP_STOPPED';

/** What a stopped model step wrote before it let go: its earlier replies and tool results, and the cut reply. */
export interface StoppedStep {
  before: ChatMessage[];
  partial?: ChatMessage;
}

/** What the model is told after a reply the user stopped, so it knows the answer was cut short. */
export const STOPPED_NOTE = '[The user pressed Stop here: this reply was cut short and is incomplete.]';
