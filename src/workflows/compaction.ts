// Folding older turns into a summary, off the person's critical path: a model step says its window passed its
// threshold (ModelStepResult.compactThrough), and once the turn has answered (the Update has its result) the
// conversation runs compactConversation, detached, one at a time. A failure costs nothing but a later fold: the
// window leaves the oldest turns out meanwhile (src/context/window.ts).
import { log, patched } from '@temporalio/workflow';
import type { ModelStepResult } from '../activities/runtime-types.ts';
import type { ChatSessionInput } from '../shared/messages.ts';
import { describeError } from '../shared/log-safe.ts';
import type { SessionActivities } from './session-activities.ts';

/** The patch under which a conversation runs compactions: histories recorded before it have none. */
export const CONTEXT_COMPACTION = 'context-compaction';

export class Compaction {
  #due: string | undefined;
  #running = false;
  readonly #activities: SessionActivities;
  readonly #input: Pick<ChatSessionInput, 'conversationId' | 'userId' | 'agent'>;

  constructor(activities: SessionActivities, input: Pick<ChatSessionInput, 'conversationId' | 'userId' | 'agent'>) {
    this.#activities = activities;
    this.#input = input;
  }

  /** a step's result: the latest fold point it asked for */
  note(result: ModelStepResult): ModelStepResult {
    if (result.compactThrough) this.#due = result.compactThrough;
    return result;
  }

  /** after a turn's answer: the fold a step asked for, unless one runs (the next turn's asks again) */
  afterTurn(): void {
    const throughMessageId = this.#due;
    if (!throughMessageId || this.#running || !patched(CONTEXT_COMPACTION)) return;
    this.#due = undefined;
    this.#running = true;
    const { conversationId, userId, agent } = this.#input;
    void this.#activities.compaction.compactConversation
      .executeWithOptions({ summary: 'fold older turns into a summary' }, [{ conversationId, userId, agent, throughMessageId }])
      .catch((error: unknown) => log.warn('The conversation was not compacted', { conversationId, reason: describeError(error) }))
      .finally(() => (this.#running = false));
  }
}
