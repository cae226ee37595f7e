// What a person is told when a turn's step fails: the words the runtime wrote for them, one wording for a step that
// ran out of time (whichever clock it was), and nothing of an internal failure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { userFacingReason } from '../../src/workflows/failure-text.ts';

const failed = (cause: Error) =>
  new ActivityFailure('activity failed', 'modelStep', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker', cause);

test('a model failure is shown in its own words', () => {
  const cause = ApplicationFailure.create({
    type: 'ModelCallError',
    message: 'The model did not start answering within 60 s',
    nonRetryable: true,
  });
  assert.equal(userFacingReason(failed(cause)), 'The model did not start answering within 60 s');
});

test('a step that ran out of time says so, whichever timeout it was', () => {
  for (const type of [TimeoutType.START_TO_CLOSE, TimeoutType.HEARTBEAT, TimeoutType.SCHEDULE_TO_START]) {
    assert.equal(
      userFacingReason(failed(new TimeoutFailure(undefined, undefined, type))),
      'the step ran out of time (its worker stopped answering or it ran too long)',
    );
  }
});

test('anything else stays with the operators', () => {
  assert.match(userFacingReason(failed(new Error('relation "x" does not exist'))), /^an internal error/);
});
