import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPrompt } from '../../src/model/prompts.ts';
import { agentNames } from '../../src/agents/registry.ts';
import type { AgentName } from '../../src/shared/messages.ts';

test('every agent has a system prompt, read once and cached', async () => {
  for (const agent of agentNames()) {
    const prompt = await loadPrompt(agent);
    assert.ok(prompt.length > 200, agent);
    assert.equal(prompt, prompt.trim());
    assert.equal(loadPrompt(agent), loadPrompt(agent), 'the same cached promise');
  }
  assert.match(await loadPrompt('support'), /approved|checked by a human/);
});

test('an unknown agent is refused before it reaches the file system', async () => {
  await assert.rejects(loadPrompt('../package' as AgentName), /Unknown agent/);
});
