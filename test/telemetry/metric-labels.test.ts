// Metric labels stay bounded (issue 29, finding 5): names that come from outside (an MCP server's tool names,
// a model's reported version) cannot grow a metric without end. Through the worker's own instrumentation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { registry } from '../../src/telemetry/metrics.ts';

/** the bound docs/security.md gives: at most 50 values a label per metric, then "other" */
const MAX_LABEL_VALUES = 50;
import { instrumentModel, instrumentTools } from '../../src/telemetry/model.ts';
import type { ChatModel } from '../../src/model/types.ts';

const seriesOf = async (name: string) => (await registry.getSingleMetric(name)!.get()).values;

test('a tool name per call (a hostile server inventing them) adds at most the bound of series; the rest is "other"', async () => {
  const names = Array.from({ length: 500 }, (_, i) => `invented_tool_${i}`);
  const tools = instrumentTools(Object.fromEntries(names.map((name) => [name, async () => ({ ok: true })])));
  for (const name of names) await tools[name]!({}, { callId: name } as never);
  await tools['x'.repeat(500)]?.({}, { callId: 'long' } as never);
  const series = await seriesOf('brigade_tool_calls_total');
  assert.ok(series.length <= MAX_LABEL_VALUES + 1, `${series.length} series`);
  const other = series.find((value) => value.labels.tool === 'other');
  assert.ok(other && other.value >= 500 - MAX_LABEL_VALUES, JSON.stringify(other));
  assert.equal(
    series.reduce((sum, value) => sum + value.value, 0),
    500,
    'every call is still counted',
  );
});

test('a model that reports a new version on every reply does not grow the token metric', async () => {
  let n = 0;
  const model: ChatModel = {
    name: 'gemini-2.5-flash',
    async generate() {
      n += 1;
      return {
        text: 'hi',
        toolCalls: [],
        model: `made-up-model-${n}-${'v'.repeat(n % 3 ? 10 : 100)}`,
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      } as never;
    },
  } as never;
  const instrumented = instrumentModel(model);
  for (let i = 0; i < 200; i++) await instrumented.generate({ messages: [] } as never);
  const series = await seriesOf('brigade_model_tokens_total');
  assert.ok(series.length <= 2 * (MAX_LABEL_VALUES + 1), `${series.length} series`);
});
