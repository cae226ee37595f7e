// The OpenAPI document, generated from the same zod schemas that validate requests.
import { z } from 'zod';
import type { OpenApiHelpers } from '../agent-server.ts';
import { AGENT_SERVERS } from '../agents/server-registry.ts';
import { MetaBody } from './meta.ts';
import {
  DecisionBody,
  ErrorBody,
  MessageBody,
  TurnResult,
  conversationSummary,
  conversationView,
  createConversationBody,
  createdConversation,
} from './schemas.ts';
import { ExportBody, ExportQuery, StopResultBody } from './conversation-lifecycle.ts';

const schema = (type: z.ZodType, io: 'input' | 'output' = 'output') => {
  const { $schema: _, ...rest } = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const json = (description: string, ref: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
});

const errors = (...codes: number[]) =>
  Object.fromEntries(
    codes.map((code) => [
      String(code),
      json(
        {
          400: 'Bad input: which field and why',
          401: 'No or bad bearer token',
          403: 'The token lacks the role the agent needs',
          404: 'Not found, or not yours',
          409: 'Not pending any more, or a turn is running',
          410: "The conversation's workflow ended and it could not be revived from PostgreSQL (a sentence says so); its transcript can still be read and exported",
          413: 'The body is larger than 256 KB (after decompression)',
          415: 'The body is not JSON (Content-Type: application/json), not UTF-8, or compressed other than gzip, deflate or br',
          422: 'A decision that does not fit its item, or an Idempotency-Key already used with a different body',
          500: 'An unexpected failure; the body carries the requestId it was logged under (also the X-Request-Id header)',
          503: 'Temporal or PostgreSQL is unavailable; see Retry-After',
        }[code]!,
        'Error',
      ),
    ]),
  );

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const idempotencyHeader = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Retrying with the same key and the same body returns the first outcome (with Idempotent-Replayed: true) instead of acting twice; ' +
    'the same key with a different body is refused with 422. Keys are per user, and per conversation for messages and decisions.',
  schema: { type: 'string', maxLength: 200 },
};

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Brigade',
      version: '0.1.0',
      description:
        'A durable backend for AI agents on Temporal. Request bodies are JSON (Content-Type: application/json, UTF-8, at most 256 KB; ' +
        'gzip, deflate or br accepted). Text fields refuse NUL and unpaired surrogate characters (400 naming the field). ' +
        'Every response carries X-Request-Id (a plain X-Request-Id sent by the client is kept).',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        CreateConversation: schema(createConversationBody(), 'input'),
        CreatedConversation: schema(createdConversation()),
        ConversationSummary: schema(conversationSummary()),
        Conversation: schema(conversationView()),
        Message: schema(MessageBody, 'input'),
        Decision: schema(DecisionBody, 'input'),
        Turn: schema(TurnResult),
        Error: schema(ErrorBody),
        // each agent's own bodies, under the names its paths refer to
        ...Object.fromEntries(
          [...AGENT_SERVERS.values()].flatMap((server) => [
            ...Object.entries(server.openapi?.schemas ?? {}).map(([name, type]) => [name, schema(type)]),
            ...Object.entries(server.openapi?.inputs ?? {}).map(([name, type]) => [name, schema(type, 'input')]),
          ]),
        ),
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/healthz': { get: { summary: 'The process is up', security: [], responses: { 200: { description: 'Up' } } } },
      '/readyz': {
        get: {
          summary: 'PostgreSQL and Temporal answer',
          security: [],
          responses: { 200: { description: 'Ready' }, 503: { description: 'A dependency is down; the body names it' } },
        },
      },
      '/v1/meta': {
        get: {
          summary: "The caller (user, roles, client), the agents its token may open with their tools' argument schemas, the model, and the Temporal Web UI (an addition, for the web client)",
          responses: { 200: { description: 'About this deployment and the caller', content: { 'application/json': { schema: schema(MetaBody) } } }, ...errors(401) },
        },
      },
      '/v1/conversations': {
        post: {
          summary: 'Start a conversation with an agent',
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateConversation' } } } },
          responses: { 201: json('Started', 'CreatedConversation'), ...errors(400, 401, 403, 413, 415, 422, 500, 503) },
        },
        get: {
          summary: "The caller's conversations, newest first (at most 100)",
          responses: {
            200: {
              description: 'Conversations',
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { conversations: { type: 'array', items: { $ref: '#/components/schemas/ConversationSummary' } } } },
                },
              },
            },
            ...errors(401, 503),
          },
        },
      },
      '/v1/conversations/{id}': {
        get: {
          summary: 'Messages, pending items, status and usage',
          parameters: [idParam],
          responses: { 200: json('The conversation', 'Conversation'), ...errors(401, 403, 404, 503) },
        },
        delete: {
          summary:
            'Delete the conversation: ends its workflow and removes its executions from Temporal (DeleteWorkflowExecution), erases its messages, events, ' +
            'model usage, tool calls and idempotency keys, and closes its event streams (event conversation.deleted). Later calls answer 404.',
          parameters: [idParam],
          responses: { 204: { description: 'Deleted' }, ...errors(401, 404, 503) },
        },
      },
      ...lifecyclePaths(),
      '/v1/conversations/{id}/messages': {
        post: {
          summary:
            'A user turn; answers when the turn ends or parks on a pending item. A conversation whose workflow run ended or is wedged is revived from PostgreSQL first (a new run, same workflow id)',
          parameters: [idParam, idempotencyHeader],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Message' } } } },
          responses: { 200: json("The turn's new messages and open pending items", 'Turn'), ...errors(400, 401, 403, 404, 409, 410, 413, 415, 422, 500, 503) },
        },
      },
      '/v1/conversations/{id}/decisions': {
        post: {
          summary: 'Decide a pending item (approve, reject, edit; yes/no; accept/reject)',
          parameters: [idParam, idempotencyHeader],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Decision' } } } },
          responses: { 200: json('What the turn did next', 'Turn'), ...errors(400, 401, 403, 404, 409, 410, 413, 415, 422, 500, 503) },
        },
      },
      '/v1/conversations/{id}/events': {
        get: {
          summary:
            'Server-Sent Events: messages, deltas, tool calls and results, pending items, progress of child workflows (data: SaveProgress for save_recipe), usage. ' +
            'Live deltas (message.delta with data.live true) have no id: they are not in the event log, leave Last-Event-ID alone, and repeat as logged message.delta events; ' +
            'merge both by data.data.offset (UTF-16 units) and data.data.attempt (a higher attempt replaces the draft)',
          parameters: [
            idParam,
            {
              name: 'Last-Event-ID',
              in: 'header',
              required: false,
              description: 'Resume after this event id; an id beyond the newest event means nothing yet (the stream waits for the next one)',
              schema: { type: 'string' },
            },
            { name: 'lastEventId', in: 'query', required: false, description: 'The same, for clients that cannot set headers', schema: { type: 'string' } },
          ],
          responses: { 200: { description: 'text/event-stream' }, ...errors(401, 403, 404, 503) },
        },
      },
      ...agentPaths(),
      '/files/mcp/{conversation}/{name}': {
        get: {
          summary:
            'A file an MCP tool answered with (an image, audio, a binary resource) on the local object store: what a tool result\'s files[].url points at. No bearer token: both ids are random. Raster images and audio are served inline, anything else as a download.',
          security: [],
          parameters: [
            { name: 'conversation', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
            { name: 'name', in: 'path', required: true, description: '<call id>-<n>.<ext>', schema: { type: 'string' } },
          ],
          responses: { 200: { description: 'The file' }, 404: json('No such file (or files are in GCS)', 'Error') },
        },
      },
    },
  };
}

const helpers: OpenApiHelpers = { json, errors, idParam, schema };

/** Each agent's paths, in registry order. */
function agentPaths(): Record<string, unknown> {
  return Object.assign({}, ...[...AGENT_SERVERS.values()].map((server) => server.openapi?.paths?.(helpers) ?? {}));
}

/** Stop and export (issue 22); delete sits with GET /v1/conversations/{id}. */
function lifecyclePaths(): Record<string, unknown> {
  return {
    '/v1/conversations/{id}/stop': {
      post: {
        summary:
          'Stop the running turn within a second: the model call in flight is cancelled (its stream closed), tools are cancelled where they can be, ' +
          'items the turn waits on are withdrawn (closedAs withdrawn). What streamed stays in the transcript with stopped: true, and the waiting messages ' +
          "call answers with stopped: true. A child workflow that already started (a save pipeline) is not cancelled: it finishes on its own and its result is not added. " +
          'Idempotent: with no turn running it answers stopped: false.',
        parameters: [idParam],
        responses: {
          200: {
            description: 'Whether a turn was stopped',
            content: { 'application/json': { schema: schema(StopResultBody) } },
          },
          ...errors(401, 404, 500, 503),
        },
      },
    },
    '/v1/conversations/{id}/export': {
      get: {
        summary:
          'The whole conversation as a download (Content-Disposition: attachment): its transcript, every tool call with arguments and result, and every decision ' +
          '(pending.opened, pending.closed and turn.stopped events). JSON by default, or Markdown for reading.',
        parameters: [idParam, { name: 'format', in: 'query', required: false, schema: schema(ExportQuery.shape.format, 'input') }],
        responses: {
          200: {
            description: 'The export',
            content: { 'application/json': { schema: schema(ExportBody) }, 'text/markdown': { schema: { type: 'string' } } },
          },
          ...errors(400, 401, 404, 503),
        },
      },
    },
  };
}
