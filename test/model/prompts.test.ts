import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { systemPrompts } from '../../src/model/prompts.ts';

test('every agent has a system prompt, read once and cached', async () => {
  const catalog = builtInCatalog();
  const loadPrompt = systemPrompts(catalog);
  for (const agent of catalog.names()) {
    const prompt = await loadPrompt(agent);
    assert.ok(prompt.length > 200, agent);
    assert.equal(prompt, prompt.trim());
    assert.equal(loadPrompt(agent), loadPrompt(agent), 'the same cached promise');
  }
  assert.match(await loadPrompt('support'), /approved|checked by a human/);
});

test('an agent the catalog does not list is refused before it reaches the file system', async () => {
  const loadPrompt = systemPrompts(builtInCatalog());
  await assert.rejects(loadPrompt('../package'), /Unknown agent/);
  await assert.rejects(loadPrompt('nobody'), /Unknown agent/);
});
