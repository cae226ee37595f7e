// What a person may be told about a failure. Failures the runtime raises on purpose (a model that refused,
// an answer that did not fit its schema, a tool's own error) carry a message written for people; anything
// else (a database error, a bug) stays in the workflow history for operators and is never shown as text.
import { ApplicationFailure, TemporalFailure, TimeoutFailure } from '@temporalio/workflow';
import type { FailureType } from '../shared/failures.ts';

/** ApplicationFailure types whose message is written to be shown. */
const SHOWN = new Set(['ModelCallError', 'ModelOutputInvalid', 'ToolError', 'StepFailed']);

export function userFacingReason(error: unknown): string {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if (current instanceof ApplicationFailure && current.type && SHOWN.has(current.type)) return current.message;
    // a step's own clock or its worker's silence: the same words whichever of them ran out
    if (current instanceof TimeoutFailure) return 'the step ran out of time (its worker stopped answering or it ran too long)';
    if (!(current instanceof TemporalFailure)) break;
  }
  return 'an internal error; operators can find it in the workflow history';
}

/**
 * A refusal whose type the API maps to a status (400, 404, 409, 422); its message is written for people, and
 * the fields it names (if any) ride in its details, for the API's body to list.
 */
export const fail = (type: FailureType, message: string, fields?: { field: string; message: string }[]) =>
  ApplicationFailure.create({ type, message, nonRetryable: true, ...(fields?.length ? { details: [{ fields }] } : {}) });
