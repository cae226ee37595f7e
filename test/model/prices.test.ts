import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { DEFAULT_MODEL_PRICES, costOf, parseModelPrices, priceOf } from '../../src/model/prices.ts';

test('a pro model costs more per token than a flash model', () => {
  const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };
  const flash = costOf(DEFAULT_MODEL_PRICES, 'gemini-2.5-flash', usage)!;
  const pro = costOf(DEFAULT_MODEL_PRICES, 'gemini-2.5-pro', usage)!;
  assert.equal(flash.amount, 2.8);
  assert.equal(pro.amount, 11.25);
  assert.equal(pro.currency, 'USD');
});

test('a dated model name takes the longest matching prefix; an unknown model has no price', () => {
  assert.equal(priceOf(DEFAULT_MODEL_PRICES, 'gpt-4o-mini-2024-07-18'), DEFAULT_MODEL_PRICES['gpt-4o-mini']);
  assert.equal(priceOf(DEFAULT_MODEL_PRICES, 'models/gemini-2.5-flash-lite'), DEFAULT_MODEL_PRICES['gemini-2.5-flash-lite']);
  assert.equal(costOf(DEFAULT_MODEL_PRICES, 'llama3.1:8b', { inputTokens: 10, outputTokens: 10 }), undefined);
});

test('an image model charges per image', () => {
  const cost = costOf(DEFAULT_MODEL_PRICES, 'gemini-3-pro-image-preview', { inputTokens: 0, outputTokens: 0, images: 2 })!;
  assert.equal(cost.amount, 0.268);
});

test('MODEL_PRICES overrides and adds entries, and bad JSON is a sentence', () => {
  const prices = parseModelPrices(
    '{"llama3.1:8b": {"input": 0, "output": 0}, "gemini-2.5-flash": {"input": 1, "output": 1, "currency": "EUR"}}',
  );
  assert.deepEqual(costOf(prices, 'gemini-2.5-flash', { inputTokens: 500_000, outputTokens: 500_000 }), { amount: 1, currency: 'EUR' });
  assert.equal(costOf(prices, 'llama3.1:8b', { inputTokens: 5, outputTokens: 5 })!.amount, 0);
  assert.throws(() => parseModelPrices('{nope'), /MODEL_PRICES must be JSON/);
  assert.throws(() => loadConfig({ MODEL_PRICES: '{"m": {"input": -1, "output": 1}}' }), /MODEL_PRICES/);
  assert.equal(loadConfig({}).MODEL_PRICES, DEFAULT_MODEL_PRICES);
});

test('cached input is priced at its own rate when MODEL_PRICES gives one, otherwise as input', () => {
  const usage = { inputTokens: 1_000_000, cachedInputTokens: 800_000, outputTokens: 0 };
  assert.equal(costOf(DEFAULT_MODEL_PRICES, 'gemini-2.5-flash', usage)!.amount, 0.3);
  const prices = parseModelPrices('{"gemini-2.5-flash": {"input": 0.3, "cachedInput": 0.03, "output": 2.5}}');
  // 200,000 uncached at 0.3 and 800,000 cached at 0.03 per million
  assert.equal(costOf(prices, 'gemini-2.5-flash', usage)!.amount, 0.084);
});
