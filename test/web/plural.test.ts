// Counted nouns in the web client (web/src/plural.ts): a list's count named by its field reads as English,
// "1 search" and not "1 searche" (issue 46, item 5).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listCount, plural, singular } from '../../web/src/plural.ts';

test('a field name becomes its singular for a count of one', () => {
  assert.equal(listCount(1, 'searches'), '1 search');
  assert.equal(listCount(3, 'searches'), '3 searches');
  assert.equal(listCount(1, 'breweries'), '1 brewery');
  assert.equal(listCount(1, 'boxes'), '1 box');
  assert.equal(listCount(1, 'dishes'), '1 dish');
  assert.equal(listCount(1, 'orders'), '1 order');
  assert.equal(listCount(0, 'orders'), 'No orders');
  assert.equal(listCount(1, 'rows'), '1 result');
  assert.equal(listCount(2, 'data'), '2 results');
});

test('words that end in s without being plural keep it', () => {
  assert.equal(singular('status'), 'status');
  assert.equal(singular('address'), 'address');
  assert.equal(singular('analysis'), 'analysis');
  assert.equal(plural(1, 'detail'), '1 detail');
  assert.equal(plural(2, 'detail'), '2 details');
});
