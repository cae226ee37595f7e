// A turn that ended in a failure (a source that could not be reached, a model that did not answer) offers
// "Try again" under it, once: it sends the person's message of that turn again as a new turn.
import type { Transcript } from './transcript';
import { resultKind } from './toolWords';

/** The message of the last turn when that turn ended in a failure, else undefined. */
export function failedTurnText(transcript: Pick<Transcript, 'order' | 'messages'>): string | undefined {
  let failed = false;
  for (let index = transcript.order.length - 1; index >= 0; index -= 1) {
    const message = transcript.messages[transcript.order[index]!];
    if (!message) continue;
    if (message.role === 'user') return failed ? message.text : undefined;
    if (message.role === 'tool' && resultKind(message.result) === 'failed') failed = true;
    // the turn's own words when the model could not answer (src/workflows/turn-machine.ts)
    if (message.role === 'assistant' && /^The model could not answer \(/.test(message.text)) failed = true;
  }
  return undefined;
}

/** The ids of the child runs (progress cards) whose failure a result in the transcript already says. */
export function failuresSaid(transcript: Pick<Transcript, 'order' | 'messages'>): Set<string> {
  const said = new Set<string>();
  for (const mid of transcript.order) {
    const message = transcript.messages[mid];
    const result = message?.role === 'tool' ? (message.result as Record<string, unknown> | undefined) : undefined;
    if (result && resultKind(result) === 'failed' && typeof result.workflow_id === 'string') said.add(result.workflow_id);
  }
  return said;
}

export function TryAgain({ onRetry, disabled }: { onRetry: () => void; disabled: boolean }) {
  return (
    <li className="msg try-again">
      <button type="button" onClick={onRetry} disabled={disabled}>
        Try again
      </button>
    </li>
  );
}
