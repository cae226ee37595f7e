// The peer of bench/turns.ts: Brigade's lookup turn built the way Temporal's AI SDK integration builds it
// (@temporalio/ai-sdk with the `ai` package, as in the sdk-typescript ai-sdk sample): a workflow calls
// generateText with temporalProvider's model, so each model call is an activity (invokeModel, run by the
// AiSdkPlugin's activities with @ai-sdk/google against the bench's Gemini-wire server), and the tool's execute
// is an activity too. One long-running workflow per conversation holds the messages; a `send` Update runs a
// turn and returns its text. A baseline for the bench, not product code: no transcript in PostgreSQL, no
// streaming to clients, no approvals, no per-step bookkeeping.
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { condition, defineSignal, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import { generateText, stepCountIs, tool, type ModelMessage } from 'ai';
import { z } from 'zod';

export interface PeerActivities {
  getOrderById(input: { order_id: string }): Promise<unknown>;
}

export const peerSendUpdate = defineUpdate<{ text: string; messages: number }, [string]>('send');
export const peerDoneSignal = defineSignal('done');

const { getOrderById } = proxyActivities<PeerActivities>({ startToCloseTimeout: '1 minute' });

const SYSTEM = 'You are a customer support agent for an online shop. Use the tools to look orders up.';

export async function peerSession(): Promise<void> {
  const messages: ModelMessage[] = [];
  let done = false;
  setHandler(peerSendUpdate, async (text) => {
    messages.push({ role: 'user', content: text });
    const result = await generateText({
      model: temporalProvider.languageModel('gemini-2.5-flash'),
      system: SYSTEM,
      messages,
      tools: {
        get_order_by_id: tool({
          description: 'Look up an order by its id',
          inputSchema: z.object({ order_id: z.string() }),
          execute: (input) => getOrderById(input),
        }),
      },
      stopWhen: stepCountIs(8),
    });
    messages.push(...result.response.messages);
    return { text: result.text, messages: 1 + result.response.messages.length };
  });
  setHandler(peerDoneSignal, () => void (done = true));
  await condition(() => done);
}
