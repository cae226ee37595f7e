// Spans and metrics around the model and the tools, following the OpenTelemetry GenAI semantic conventions
// (gen_ai.operation.name, gen_ai.request.model, gen_ai.usage.*). Prompt and completion text stay out of the
// spans unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT turns them on.
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { ChatModel, ModelReply, ModelRequest } from '../model/types.ts';
import { boundedLabel, metrics } from './metrics.ts';
import { tracer, tracingEnabled } from './tracing.ts';
import { turnAttributes, turnContext } from './turn-context.ts';

export interface ModelTelemetryOptions {
  /** record the prompt and the reply on the span (they may hold personal data) */
  captureContent?: boolean;
  /** gen_ai.provider.name / gen_ai.system */
  provider?: string;
}

export function instrumentModel(model: ChatModel, options: ModelTelemetryOptions = {}): ChatModel {
  const provider = options.provider ?? (model.name.startsWith('gemini') ? 'gcp.gemini' : 'brigade.offline');
  return {
    name: model.name,
    async generate(request: ModelRequest): Promise<ModelReply> {
      const turn = turnContext();
      const agent = turn.agent ?? 'unknown';
      const started = performance.now();
      const record = (reply: ModelReply | undefined, error?: unknown) => {
        const responseModel = boundedLabel('brigade_model_tokens_total', reply?.model ?? model.name);
        metrics.modelSeconds.observe({ agent, model: model.name }, (performance.now() - started) / 1000);
        metrics.modelCalls.inc({ agent, model: model.name, outcome: error ? 'error' : 'ok' });
        if (error && /timed? ?out|timeout|deadline/i.test(String((error as Error)?.message ?? ''))) metrics.timeouts.inc({ what: 'model' });
        if (reply) {
          metrics.modelTokens.inc({ agent, model: responseModel, type: 'input' }, reply.usage.inputTokens);
          metrics.modelTokens.inc({ agent, model: responseModel, type: 'output' }, reply.usage.outputTokens);
          if (reply.usage.cachedInputTokens) metrics.modelCachedTokens.inc({ agent, model: responseModel }, reply.usage.cachedInputTokens);
        }
      };
      if (!tracingEnabled()) {
        try {
          const reply = await model.generate(request);
          record(reply);
          return reply;
        } catch (error) {
          record(undefined, error);
          throw error;
        }
      }
      return tracer().startActiveSpan(`chat ${model.name}`, { kind: SpanKind.CLIENT }, async (span: Span) => {
        span.setAttributes({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': provider,
          'gen_ai.system': provider,
          'gen_ai.request.model': model.name,
          ...(request.output ? { 'gen_ai.output.type': 'json' } : { 'gen_ai.output.type': 'text' }),
          'brigade.model.tools': request.tools.length,
          'brigade.model.messages': request.messages.length,
        });
        for (const [key, value] of Object.entries(turnAttributes(turn))) if (value !== undefined) span.setAttribute(key, value);
        if (options.captureContent) {
          span.setAttribute('gen_ai.system_instructions', JSON.stringify([{ type: 'text', content: request.system }]));
          span.setAttribute('gen_ai.input.messages', JSON.stringify(request.messages));
        }
        try {
          const reply = await model.generate(request);
          span.setAttributes({
            'gen_ai.response.model': reply.model,
            'gen_ai.usage.input_tokens': reply.usage.inputTokens,
            'gen_ai.usage.output_tokens': reply.usage.outputTokens,
            ...(reply.usage.cachedInputTokens ? { 'gen_ai.usage.cache_read.input_tokens': reply.usage.cachedInputTokens } : {}),
            'gen_ai.response.finish_reasons': [reply.toolCalls.length ? 'tool_call' : 'stop'],
            'brigade.model.tool_calls': reply.toolCalls.length,
          });
          if (options.captureContent) {
            span.setAttribute(
              'gen_ai.output.messages',
              JSON.stringify([{ role: 'assistant', text: reply.text, toolCalls: reply.toolCalls }]),
            );
          }
          record(reply);
          return reply;
        } catch (error) {
          record(undefined, error);
          span.recordException(error as Error);
          span.setAttribute('error.type', (error as Error)?.name ?? 'Error');
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
          throw error;
        } finally {
          span.end();
        }
      });
    },
  };
}

/** A tool implementation as telemetry sees it: a name's function, given its call's context (with `callId`). */
type InstrumentedTool = (args: any, context: any) => Promise<unknown>;

/** Each tool as an execute_tool span, counted by name (and its failures). */
export function instrumentTools(implementations: Record<string, InstrumentedTool>): Record<string, InstrumentedTool> {
  return Object.fromEntries(
    Object.entries(implementations).map(([name, implementation]) => {
      const wrapped: InstrumentedTool = async (args, ctx) => {
        metrics.toolCalls.inc({ tool: boundedLabel('brigade_tool_calls_total', name) });
        const run = async () => {
          try {
            return await implementation(args, ctx);
          } catch (error) {
            metrics.toolErrors.inc({ tool: boundedLabel('brigade_tool_errors_total', name) });
            throw error;
          }
        };
        if (!tracingEnabled()) return run();
        return tracer().startActiveSpan(`execute_tool ${name}`, { kind: SpanKind.INTERNAL }, async (span: Span) => {
          span.setAttributes({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.id': ctx.callId });
          for (const [key, value] of Object.entries(turnAttributes(turnContext()))) if (value !== undefined) span.setAttribute(key, value);
          try {
            return await run();
          } catch (error) {
            span.recordException(error as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
            throw error;
          } finally {
            span.end();
          }
        });
      };
      return [name, wrapped];
    }),
  );
}
