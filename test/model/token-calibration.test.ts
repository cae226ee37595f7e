// The context window's estimate is reconciled with what the provider counts: the ratio moves toward the reports, and
// a report no tokenizer would give (a test server's or a proxy's count of nothing) teaches nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tokenCalibration } from '../../src/model/token-estimate.ts';

test('reports of more tokens than estimated move the ratio toward them; absurd reports are ignored', () => {
  tokenCalibration.ratio = 1;
  tokenCalibration.reconcile(1000, 10);
  tokenCalibration.reconcile(1000, 50_000);
  tokenCalibration.reconcile(100, 150);
  assert.equal(tokenCalibration.ratio, 1, 'a count under half or over twice the estimate, or of a tiny call, teaches nothing');
  for (let call = 0; call < 30; call += 1) tokenCalibration.reconcile(1000, 1500);
  assert.ok(Math.abs(tokenCalibration.ratio - 1.5) < 0.01, `converged on the provider's count: ${tokenCalibration.ratio}`);
  tokenCalibration.ratio = 1;
});
