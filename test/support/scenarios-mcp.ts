// A replay scenario with MCP tools: its own app (the scripted Gemini server, the kitchen MCP server over stdio
// and Streamable HTTP), since the replay app runs the offline model, which calls no MCP tool. Covers the tool
// list activity, a read-only call, approve / reject / edit of a gated call, a failing tool and an answered
// elicitation; its history replays from the workflow code alone.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reply, startFakeGemini } from './fake-gemini.ts';
import { startKitchenHttp } from './mcp-kitchen.ts';
import type { Scenario } from './scenarios.ts';
import { startTestApp } from './test-app.ts';

const STDIO_SERVER = new URL('./mcp-stdio-server.ts', import.meta.url).pathname;

export const mcpScenarios: Scenario[] = [
  {
    name: 'mcp-tools',
    async run() {
      const fake = await startFakeGemini();
      const kitchen = await startKitchenHttp();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-mcp-replay-'));
      const configPath = path.join(dir, 'mcp.json');
      fs.writeFileSync(
        configPath,
        JSON.stringify({
          mcpServers: {
            pantry: { command: process.execPath, args: [STDIO_SERVER], agents: ['support'] },
            kitchen: { url: kitchen.url, agents: ['support'] },
          },
        }),
      );
      const app = await startTestApp({
        env: { GEMINI_API_KEY: 'replay-key', GEMINI_BASE_URL: fake.baseUrl, BRIGADE_MCP_CONFIG: configPath },
      });
      try {
        const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: 'replay mcp' } });
        const id: string = created.body.id;
        const post = async (what: string, body: Record<string, unknown>) => {
          const answer = await app.call('POST', `/v1/conversations/${id}/${what}`, { body });
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          return answer.body;
        };
        fake.script(reply.calls({ name: 'pantry__lookup_pantry', args: { ingredient: 'sugar' } }), reply.text('500 g of sugar.'));
        await post('messages', { text: 'How much sugar?' });

        fake.script(reply.calls({ name: 'kitchen__order_groceries', args: { item: 'eggs', quantity: 6 } }));
        const first = await post('messages', { text: 'Order eggs' });
        fake.script(reply.calls({ name: 'kitchen__order_groceries', args: { item: 'milk', quantity: 1 } }));
        const second = await post('decisions', { pendingId: first.pending[0].id, decision: 'approve' });
        fake.script(reply.calls({ name: 'kitchen__order_groceries', args: { item: 'tea', quantity: 1 } }));
        const third = await post('decisions', { pendingId: second.pending[0].id, decision: 'reject', reason: 'no milk' });
        fake.script(reply.calls({ name: 'kitchen__broken_oven', args: { celsius: 180 } }), reply.text('Done, but the oven is broken.'));
        await post('decisions', { pendingId: third.pending[0].id, decision: 'edit', args: { item: 'tea', quantity: 2 } });

        fake.script(reply.calls({ name: 'kitchen__confirm_delivery', args: { order: 'A-1' } }));
        const question = await post('messages', { text: 'Book the delivery' });
        assert.equal(question.pending[0].kind, 'question');
        fake.script(reply.text('Booked for Tuesday.'));
        await post('decisions', { pendingId: question.pending[0].id, decision: 'accept', args: { day: 'tuesday' } });
        return id;
      } finally {
        await app.stop();
        await kitchen.close();
        await fake.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  },
];
