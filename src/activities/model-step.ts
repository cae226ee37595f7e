import { Context } from '@temporalio/activity';
import { asModelFailure } from './model-failure.ts';
import type pg from 'pg';
import { asUser } from '../db/pool.ts';
import { insertEvents, insertMessages, readTranscript } from '../db/transcript.ts';
import { toolDeclarations } from '../model/declarations.ts';
import type { ChatModel, ModelReply } from '../model/types.ts';
import { AGENT_SPECS } from '../shared/agents.ts';
import type { AgentName, ChatMessage } from '../shared/messages.ts';
import { storableJson, storableText } from '../shared/safe-text.ts';
import type { ModelStepInput, ModelStepResult } from './runtime-types.ts';
import { DeltaWriter } from './delta-writer.ts';
import type { Config } from '../config.ts';
import { askStructured, responseSchema } from '../model/structured.ts';

export interface ModelStepDeps {
  pool: pg.Pool;
  model: ChatModel;
  systemPrompt: (agent: AgentName) => Promise<string>;
  config: Pick<Config, 'MODEL_SCHEMA_ATTEMPTS'>;
}

/**
 * One model call: write what the workflow handed over, read the transcript (by reference, so history
 * stays small), call the model while streaming deltas as events, then write the answer and its usage.
 */
export function createModelStep({ pool, model, systemPrompt, config }: ModelStepDeps) {
  return async function modelStep(input: ModelStepInput): Promise<ModelStepResult> {
    const { conversationId, userId, agent, stepId } = input;
    const transcript = await asUser(pool, userId, async (db) => {
      await insertMessages(db, conversationId, userId, input.messages);
      await insertEvents(db, conversationId, userId, input.events);
      return readTranscript(db, conversationId);
    });

    // A previous attempt may have written its answer and then lost the reply: return that answer.
    const earlier = transcript.find((message) => message.id === stepId);
    if (earlier) return { message: earlier, usage: await readUsage(pool, input) };

    const kernel = AGENT_SPECS[agent].kernel;
    const system = await systemPrompt(agent);
    const deltas = new DeltaWriter(pool, input, { attempt: Context.current().info.attempt });
    // Heartbeat on a clock, not on tokens: a model that thinks long before its first token is alive,
    // while a worker that died stops heartbeating and its attempt is retried without waiting out the timeout.
    const context = Context.current();
    const beat = setInterval(() => context.heartbeat(), Math.max(200, (context.info.heartbeatTimeoutMs ?? 3000) / 3));
    let reply: ModelReply;
    let structured: unknown;
    let tail: Awaited<ReturnType<DeltaWriter['close']>> = [];
    try {
      if (kernel) {
        // A JSON answer is not streamed (its raw text is no reply to show); it is checked and asked again.
        const output = { name: agent, schema: responseSchema(kernel.output.schema) };
        const spent = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
        structured = await askStructured(
          kernel.output.schema,
          config.MODEL_SCHEMA_ATTEMPTS,
          async (correction) => {
            reply = await model.generate({
              system,
              messages: correction ? [...transcript, { id: `${stepId}.correction`, role: 'user', text: correction }] : transcript,
              tools: [],
              ...(input.context ? { context: input.context } : {}),
              output,
              signal: context.cancellationSignal,
            });
            spent.inputTokens += reply.usage.inputTokens;
            spent.outputTokens += reply.usage.outputTokens;
            spent.totalTokens += reply.usage.totalTokens;
            return reply.text;
          },
          `The ${agent} model`,
        );
        reply = { ...reply!, text: kernel.output.text(structured), usage: spent };
      } else {
        reply = await model.generate({
          system,
          messages: transcript,
          tools: toolDeclarations(AGENT_SPECS[agent].tools),
          onText: (delta) => deltas.push(delta),
          signal: context.cancellationSignal,
        });
      }
    } catch (error) {
      throw asModelFailure(error);
    } finally {
      clearInterval(beat);
      tail = await deltas.close();
    }

    // The model's text and arguments are made storable before anyone sees them, so the workflow, the
    // tools and the transcript all hold the same value and no reply can fail a write.
    const message: ChatMessage = { id: stepId, role: 'assistant', text: storableText(reply.text) };
    if (structured !== undefined) message.structured = storableJson(structured);
    if (reply.toolCalls.length) {
      message.toolCalls = reply.toolCalls.map((call, index) => ({
        id: `${stepId}.${index + 1}`,
        name: storableText(call.name),
        args: storableJson(call.args),
      }));
    }
    const usage = { model: reply.model, ...reply.usage };
    await asUser(pool, userId, async (db) => {
      await insertMessages(db, conversationId, userId, [message]);
      await db.query(
        `INSERT INTO model_usage (conversation_id, user_id, step_id, model, input_tokens, output_tokens, total_tokens)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [conversationId, userId, stepId, usage.model, usage.inputTokens, usage.outputTokens, usage.totalTokens],
      );
      const ended = message.toolCalls ? [] : [{ key: `turn-ended:${stepId}`, type: 'turn.ended' as const, data: { messageId: stepId } }];
      await insertEvents(db, conversationId, userId, [
        ...tail,
        { key: `usage:${stepId}`, type: 'usage', data: { stepId, ...usage } },
        ...ended,
      ]);
    });
    return { message, usage };
  };
}

async function readUsage(pool: pg.Pool, { conversationId, userId, stepId }: ModelStepInput) {
  return asUser(pool, userId, async (db) => {
    const { rows } = await db.query(
      `SELECT model, input_tokens AS "inputTokens", output_tokens AS "outputTokens", total_tokens AS "totalTokens"
         FROM model_usage WHERE conversation_id = $1 AND step_id = $2`,
      [conversationId, stepId],
    );
    return rows[0] ?? { model: 'unknown', inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  });
}

