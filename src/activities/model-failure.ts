// Temporal owns retries of model calls: a failed call becomes an ApplicationFailure that says whether a retry
// can help, and whose type tells the workflow its message was written to be shown (failure-text.ts).
import { ApplicationFailure } from '@temporalio/activity';
import { ModelOutputInvalid } from '../model/structured.ts';
import { ModelCallError } from '../model/types.ts';

export function asModelFailure(error: unknown): unknown {
  if (error instanceof ModelOutputInvalid) {
    return ApplicationFailure.create({ type: 'ModelOutputInvalid', message: error.message, nonRetryable: true });
  }
  // an answer the engine could not take apart (JSON nested past the stack): asking again gets the same answer
  if (error instanceof RangeError) {
    return ApplicationFailure.create({
      type: 'ModelOutputInvalid',
      message: "the model's answer could not be processed",
      nonRetryable: true,
    });
  }
  if (error instanceof ModelCallError) {
    return ApplicationFailure.create({
      type: 'ModelCallError',
      message: error.message,
      nonRetryable: !error.retryable,
      details: [{ status: error.status ?? null }],
    });
  }
  return error;
}
