// The OpenAPI document, generated from the same zod schemas that validate requests.
import { z } from 'zod';
import type { OpenApiHelpers, ServerCatalog } from './agent-server.ts';
import { metaBody } from './meta.ts';
import { BudgetApproval } from './budget-approval.ts';
import { ApiKeyList, CreateApiKeyBody, CreatedApiKey } from './api-keys.ts';
import { ScheduleList, ScheduleView, createScheduleBody, patchScheduleBody } from './schedules.ts';
import { McpConnectStarted, McpConnected, McpDisconnected, McpServerList } from './mcp-oauth.ts';
import {
  BranchBody,
  DecisionBody,
  EditBody,
  ForkBody,
  ErrorBody,
  MessageBody,
  RenameBody,
  RenamedBody,
  TurnResult,
  conversationList,
  conversationSummary,
  ContextSummaryView,
  conversationView,
  createConversationBody,
  createdConversation,
} from './schemas.ts';
import { ExportBody, ExportQuery, StopResultBody } from './conversation-lifecycle.ts';
import { CodecBody } from './codec-server.ts';
import { ErasureReport, PersonalExport } from './personal-data-routes.ts';
import { withOperationIds } from './openapi-ids.ts';

const schema = (type: z.ZodType, io: 'input' | 'output' = 'output') => {
  const { $schema: _, ...rest } = z.toJSONSchema(type, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const json = (description: string, ref: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
});

// Every operation behind the front door may be refused by the request limits (request-limits.ts): where a 401
// is documented, so is a 429.
const errors = (...codes: number[]) =>
  Object.fromEntries(
    (codes.includes(401) && !codes.includes(429) ? [...codes, 429] : codes).map((code) => [
      String(code),
      json(
        {
          400: 'Bad input: which field and why',
          401: 'No or bad bearer token',
          403: 'The token lacks the role the agent needs',
          404: 'Not found, or not yours',
          409: 'Not pending any more, or a turn is running, or (a message without `pending`) the turn waits for a decision: the sentence names the open items and `fields` lists them (field: the item id, message: its kind and tool)',
          410: 'The conversation was deleted while this turn ran, or its workflow ended and it could not be revived from PostgreSQL (a sentence says which); a transcript that is left can still be read and exported',
          413: 'The body is larger than 256 KB (after decompression)',
          415: 'The body is not JSON (Content-Type: application/json), not UTF-8, or compressed other than gzip, deflate or br',
          422: "A decision that does not fit its item (an MCP question's answer or an edit's arguments that do not fit their schema: `fields` names each), or an Idempotency-Key already used with a different body",
          429: "Over one of the caller's limits (requests a minute or at once, event streams open, new conversations or turns per minute), or too many refused requests from the caller's address; Retry-After says when to try again",
          500: 'An unexpected failure; the body carries the requestId it was logged under (also the X-Request-Id header)',
          503: 'Temporal or PostgreSQL is unavailable; see Retry-After',
        }[code]!,
        'Error',
      ),
    ]),
  );

/**
 * An operation a personal API key reaches only with these scopes (key-scopes.ts): the scopes by name
 * (`x-api-key-scopes`, on the operation) and its 403 (spread into its responses).
 */
const keyScopes = (...scopes: string[]) => ({ 'x-api-key-scopes': scopes });
const scopeRefused = (roleToo: string | undefined, ...scopes: string[]) => ({
  403: json(
    `${roleToo ? `The caller lacks the ${roleToo} role, or an` : 'An'} API key made without the ${scopes.map((scope) => `"${scope}"`).join(' and ')} scope${scopes.length > 1 ? 's' : ''} (scopes: [...] on POST /v1/api-keys)`,
    'Error',
  ),
});

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const messageIdParam = {
  name: 'messageId',
  in: 'path',
  required: true,
  description: "a message's id (GET /v1/conversations/{id})",
  schema: { type: 'string' },
};
const idempotencyHeader = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Retrying with the same key and the same body returns the first outcome (with Idempotent-Replayed: true) instead of acting twice; ' +
    'the same key with a different body is refused with 422. Keys are per user, and per conversation for messages and decisions.',
  schema: { type: 'string', maxLength: 200 },
};

/**
 * The document; `publicUrl` (PUBLIC_URL) is where clients reach the API, else the server is the one that
 * served the document. Operations without an explicit operationId get one made from method and path.
 */
export function openApiDocument(catalog: ServerCatalog, { publicUrl }: { publicUrl?: string } = {}): Record<string, unknown> {
  return withOperationIds({
    openapi: '3.1.0',
    info: {
      title: 'Brigade',
      version: '0.1.0',
      description:
        'A durable backend for AI agents on Temporal. Request bodies are JSON (Content-Type: application/json, UTF-8, at most 256 KB; ' +
        'gzip, deflate or br accepted). Text fields refuse NUL and unpaired surrogate characters (400 naming the field). ' +
        'Every response carries X-Request-Id (a plain X-Request-Id sent by the client is kept).',
    },
    servers: [
      publicUrl
        ? { url: publicUrl.replace(/\/+$/, ''), description: 'this deployment (PUBLIC_URL)' }
        : { url: '/', description: 'this server' },
    ],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        CreateConversation: schema(createConversationBody(catalog), 'input'),
        CreatedConversation: schema(createdConversation(catalog)),
        ConversationSummary: schema(conversationSummary(catalog)),
        ConversationList: schema(conversationList(catalog)),
        Conversation: schema(conversationView(catalog)),
        ContextSummary: schema(ContextSummaryView),
        // the wire's open vocabularies, as this deployment's catalog fills them (the runtime's and its agents')
        PendingKind: { type: 'string', description: "a pending item's kind (PendingItem.kind)", enum: catalog.pendingKinds() },
        EventType: { type: 'string', description: "an event's type (the event stream's `type`)", enum: catalog.eventTypes() },
        Message: schema(MessageBody, 'input'),
        Decision: schema(DecisionBody, 'input'),
        Turn: schema(TurnResult),
        BudgetApproval: schema(BudgetApproval),
        Error: schema(ErrorBody),
        // each agent's own bodies, under the names its paths refer to
        ...Object.fromEntries(
          catalog.servers.flatMap((server) => [
            ...Object.entries(server.openapi?.schemas ?? {}).map(([name, type]) => [name, schema(type)]),
            ...Object.entries(server.openapi?.inputs ?? {}).map(([name, type]) => [name, schema(type, 'input')]),
          ]),
        ),
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/healthz': {
        get: { operationId: 'checkLiveness', summary: 'The process is up', security: [], responses: { 200: { description: 'Up' } } },
      },
      '/readyz': {
        get: {
          operationId: 'checkReadiness',
          summary: 'PostgreSQL and Temporal answer',
          security: [],
          responses: { 200: { description: 'Ready' }, 503: { description: 'A dependency is down; the body names it' } },
        },
      },
      '/v1/meta': {
        get: {
          operationId: 'getMeta',
          summary:
            "The caller (user, roles, client), the agents its token may open with their tools' argument schemas, the model, and the Temporal Web UI (an addition, for the web client)",
          responses: {
            200: {
              description: 'About this deployment and the caller',
              content: { 'application/json': { schema: schema(metaBody(catalog)) } },
            },
            ...errors(401),
          },
        },
      },
      '/v1/conversations': {
        post: {
          operationId: 'createConversation',
          summary: 'Start a conversation with an agent',
          parameters: [idempotencyHeader],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateConversation' } } } },
          responses: { 201: json('Started', 'CreatedConversation'), ...errors(400, 401, 403, 413, 415, 422, 429, 500, 503) },
        },
        get: {
          operationId: 'listConversations',
          summary:
            "The caller's conversations, the most recently active first (`lastActivityAt`: the newest event or message), a page at a time (at most `limit`, default and most 100); `nextCursor` is the next page's `cursor`, null on the last page. " +
            "With `q`, only those whose title or one of the caller's own messages contains it, each found by a message with `match`: the words around the search in the newest such message (about 120 characters, on one line, … where cut)",
          parameters: [
            {
              name: 'cursor',
              in: 'query',
              required: false,
              description: 'nextCursor of the page before, as it came (opaque)',
              schema: { type: 'string', maxLength: 200 },
            },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 100 } },
            {
              name: 'q',
              in: 'query',
              required: false,
              description:
                "Search: the conversations whose title or one of the caller's own messages contains this text, in any case; `%`, `_` and `\\` are matched as they are (trimmed, 1 to 100 characters)",
              schema: { type: 'string', minLength: 1, maxLength: 100 },
            },
          ],
          responses: {
            200: json('A page of conversations', 'ConversationList'),
            ...errors(400, 401, 503),
          },
        },
      },
      '/v1/conversations/{id}': {
        get: {
          operationId: 'getConversation',
          summary: 'Messages, pending items, status and usage',
          parameters: [idParam],
          responses: { 200: json('The conversation', 'Conversation'), ...errors(401, 403, 404, 503) },
        },
        patch: {
          operationId: 'renameConversation',
          summary:
            'Rename the conversation (owner only): a title of 1 to 200 characters, trimmed. Its event streams get a title.changed event. ' +
            'A conversation started without a title gets one made from its first exchange, unless it was renamed first.',
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: schema(RenameBody, 'input') } } },
          responses: {
            200: { description: 'The new title', content: { 'application/json': { schema: schema(RenamedBody) } } },
            ...errors(400, 401, 403, 404, 413, 415, 503),
          },
        },
        delete: {
          operationId: 'deleteConversation',
          summary:
            'Delete the conversation: ends its workflow and removes its executions from Temporal (DeleteWorkflowExecution), erases its messages, events, ' +
            'model usage, tool calls and idempotency keys, and closes its event streams (event conversation.deleted). Later calls answer 404.',
          parameters: [idParam],
          responses: { 204: { description: 'Deleted' }, ...errors(401, 403, 404, 503) },
        },
      },
      '/v1/conversations/{id}/context-summary': {
        get: {
          operationId: 'getContextSummary',
          summary: "The summary the agent's model reads instead of the conversation's older messages",
          description:
            'A long conversation is sent to the model as a summary of its older turns plus its newest messages (MODEL_CONTEXT_TOKENS); ' +
            'the transcript (GET /v1/conversations/{id}) stays whole, and its `context` says whether and through which message it is summarized. ' +
            '404 when the conversation has no summary (the model reads all of it).',
          parameters: [idParam],
          responses: { 200: json('The latest summary', 'ContextSummary'), ...errors(401, 403, 404, 503) },
        },
      },
      ...lifecyclePaths(),
      ...protectionPaths(),
      ...signInPaths(),
      ...schedulePaths(catalog),
      ...mcpConnectionPaths(),
      '/v1/conversations/{id}/messages': {
        post: {
          operationId: 'sendMessage',
          summary:
            'A user turn; answers when the turn ends or parks on a pending item. A conversation whose workflow run ended or is wedged is revived from PostgreSQL first (a new run, same workflow id)',
          description:
            'The answer is bounded (about 1 MB whatever the turn did): a tool result over 16 KB comes as a stand-in ' +
            '{elided: true, bytes, preview, error?}, and a message shortened so is marked elided: true; GET /v1/conversations/{id} ' +
            'and the event stream have every message whole. What a tool returns to the model is capped by TOOL_RESULT_MAX_BYTES; ' +
            'a cut result carries truncated: {bytes, maxBytes} and a note, in the transcript as the model saw it. ' +
            'While the turn waits for a person (an approval, a question, a budget item), a message must say what it does with them in `pending`: ' +
            '`decline` makes its text the reason that declines every open item of the turn and every call of the same reply that would ask next ' +
            '(the answer lists them in `declined`); `keep` holds it in the conversation (durably) and sends it as the next turn once this one ends ' +
            '(the answer carries it as `held`, at once; a second one is refused with 409). Without `pending` the answer is 409, naming the items.',
          parameters: [idParam, idempotencyHeader],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Message' } } } },
          responses: {
            200: json("The turn's new messages and open pending items", 'Turn'),
            ...errors(400, 401, 403, 404, 409, 410, 413, 415, 422, 429, 500, 503),
          },
        },
      },
      '/v1/conversations/{id}/messages/{messageId}/edit': {
        post: {
          operationId: 'editMessage',
          summary: 'Edit a user message: a sibling user message with the new text, and a turn runs from there (issue 45)',
          description:
            'The conversation is a tree: the edited message stays, its new version becomes its sibling and the current branch, and the model ' +
            'reads the path from the first message to the new one. A turn parked on a pending item is left behind: its items are withdrawn ' +
            '(pending.closed, withdrawn) and the child runs they belong to end. 404: the message is not in this conversation; 409: a turn ' +
            'is running; 422: the message is not a user message (regenerate an answer instead).',
          parameters: [idParam, messageIdParam, idempotencyHeader],
          requestBody: { required: true, content: { 'application/json': { schema: schema(EditBody, 'input') } } },
          responses: {
            200: json("The turn's new messages and open pending items", 'Turn'),
            ...errors(400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503),
          },
        },
      },
      '/v1/conversations/{id}/messages/{messageId}/regenerate': {
        post: {
          operationId: 'regenerateMessage',
          summary:
            'Answer again: the turn runs again from the user message before this answer, and its answer becomes a sibling (issue 45)',
          description:
            'No body (or an empty object). 404: the message is not in this conversation; 409: a turn is running; 422: the message is not ' +
            "an answer (edit a user message instead). The turn's messages are the new answer and what it did (tools), not the user message.",
          parameters: [idParam, messageIdParam, idempotencyHeader],
          responses: {
            200: json("The turn's new messages and open pending items", 'Turn'),
            ...errors(400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503),
          },
        },
      },
      '/v1/conversations/{id}/branch': {
        post: {
          operationId: 'switchBranch',
          summary: 'Make another branch current: the one through leafId, at its newest message (issue 45)',
          description:
            "leafId may be any message of the branch (a sibling's id from `siblings.ids`); its newest message becomes the leaf, what the next " +
            'turn follows. The event stream gets a branch.changed event. A turn parked on a pending item is left behind (its items withdrawn). ' +
            '404: the message is not in this conversation; 409: a turn is running.',
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: schema(BranchBody, 'input') } } },
          responses: {
            200: json('The conversation, on its new branch', 'Conversation'),
            ...errors(400, 401, 403, 404, 409, 413, 415, 429, 503),
          },
        },
      },
      '/v1/conversations/{id}/fork': {
        post: {
          operationId: 'forkConversation',
          summary:
            'Fork into a new conversation: its own workflow, its transcript a copy of the path up to and including messageId (issue 45)',
          description:
            'The copy has message ids of its own; its first event, conversation.forked, names the conversation and message it came from. ' +
            "A stateful agent's fork starts from the agent's state at that message (its path's newest answer). 404: the message is not in this conversation.",
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: schema(ForkBody, 'input') } } },
          responses: { 201: json('Started', 'CreatedConversation'), ...errors(400, 401, 403, 404, 413, 415, 429, 500, 503) },
        },
      },
      '/v1/conversations/{id}/decisions': {
        post: {
          operationId: 'decide',
          summary: 'Decide a pending item (approve, reject, edit; yes/no; accept/reject)',
          description:
            "With BUDGET_APPROVER_ROLE set, approving a budget item is refused to the conversation's own user (403), and a user with that role " +
            'may decide the budget item of a conversation that is not theirs (nothing else of it): the answer is then a BudgetApproval, once the ' +
            'conversation has accepted the decision. An approval is bound to the call it asks about: a decision whose `args` differ from ' +
            "the item's (other than an edit) is refused with 409, and an edit that changes a field the tool's policy does not let an edit " +
            'change with 422 naming the fields.',
          parameters: [idParam, idempotencyHeader],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Decision' } } } },
          responses: {
            200: {
              description: "What the turn did next (the conversation's user), or that the decision was taken (an approver)",
              content: {
                'application/json': {
                  schema: { oneOf: [{ $ref: '#/components/schemas/Turn' }, { $ref: '#/components/schemas/BudgetApproval' }] },
                },
              },
            },
            ...errors(400, 401, 403, 404, 409, 410, 413, 415, 422, 429, 500, 503),
          },
        },
      },
      '/v1/conversations/{id}/events': {
        get: {
          operationId: 'streamEvents',
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
              description:
                "Resume after this event id (an event's place in its conversation: 1, 2, 3, …); an id beyond the newest event means nothing yet (the stream waits for the next one)",
              schema: { type: 'string' },
            },
            {
              name: 'lastEventId',
              in: 'query',
              required: false,
              description: 'The same, for clients that cannot set headers',
              schema: { type: 'string' },
            },
          ],
          responses: { 200: { description: 'text/event-stream' }, ...errors(401, 403, 404, 429, 503) },
        },
      },
      ...agentPaths(catalog),
      '/files/mcp/{conversation}/{name}': {
        get: {
          operationId: 'getMcpFile',
          summary:
            "A file an MCP tool answered with (an image, audio, a binary resource) on the local object store: what a tool result's files[].url points at. No bearer token: both ids are random. Raster images and audio are served inline, anything else as a download.",
          security: [],
          parameters: [
            { name: 'conversation', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
            { name: 'name', in: 'path', required: true, description: '<call id>-<n>.<ext>', schema: { type: 'string' } },
          ],
          responses: { 200: { description: 'The file' }, 404: json('No such file (or files are in GCS)', 'Error') },
        },
      },
    },
  });
}

const helpers: OpenApiHelpers = { json, errors, idParam, schema };

/** Each agent's paths, in the catalog's order. */
function agentPaths(catalog: ServerCatalog): Record<string, unknown> {
  return Object.assign({}, ...catalog.servers.map((server) => server.openapi?.paths?.(helpers) ?? {}));
}

/** MCP servers behind OAuth, connected by each person (issue 47). */
function mcpConnectionPaths(): Record<string, unknown> {
  const name = {
    name: 'name',
    in: 'path',
    required: true,
    description: "the server's name in BRIGADE_MCP_CONFIG",
    schema: { type: 'string' },
  };
  return {
    '/v1/mcp/servers': {
      get: {
        operationId: 'listMcpServers',
        summary:
          'The MCP servers of BRIGADE_MCP_CONFIG, and for each one behind OAuth that a person connects (auth "oauth"), whether the caller has connected it. Never a token',
        responses: {
          200: { description: 'Servers', content: { 'application/json': { schema: schema(McpServerList) } } },
          ...errors(401, 503),
        },
      },
    },
    '/v1/mcp/servers/{name}/connect': {
      post: {
        operationId: 'connectMcpServer',
        summary:
          "Start connecting a server behind OAuth for the caller: MCP authorization (discovery, registration, authorization code with PKCE, the resource indicator, the scope the server asks for). The answer is the URL the caller's browser goes to; the provider sends it back to /mcp/oauth/callback. The PKCE verifier stays on the server; the state is the caller's alone, for one use within 10 minutes",
        parameters: [name],
        responses: {
          200: { description: 'Where to consent', content: { 'application/json': { schema: schema(McpConnectStarted) } } },
          ...errors(401, 404),
          409: json('The server is not one a person connects (a service identity, or cross-app: reached with the sign-in)', 'Error'),
          502: json('The server or its authorization server could not be used (the reason in words)', 'Error'),
          503: json('Payload encryption is off: tokens could not be sealed', 'Error'),
        },
      },
    },
    '/v1/mcp/oauth/callback': {
      get: {
        operationId: 'finishMcpConnection',
        summary:
          "The code and state the provider sent back, handed over by the web client (or a script) with the caller's own credentials: the code is traded for tokens, sealed under the caller's own key. Only the person who started it, once, within 10 minutes",
        parameters: [
          { name: 'code', in: 'query', required: false, schema: { type: 'string' } },
          { name: 'state', in: 'query', required: false, schema: { type: 'string' } },
          {
            name: 'error',
            in: 'query',
            required: false,
            description: "the provider's refusal (access_denied, …)",
            schema: { type: 'string' },
          },
        ],
        responses: {
          200: { description: 'Connected', content: { 'application/json': { schema: schema(McpConnected) } } },
          400: json('Refused at the provider, or a state unknown, used or expired', 'Error'),
          ...errors(401),
          502: json('The authorization server refused the code', 'Error'),
          503: json('Payload encryption is off', 'Error'),
        },
      },
    },
    '/v1/mcp/servers/{name}/connection': {
      delete: {
        operationId: 'disconnectMcpServer',
        summary:
          'Disconnect: the caller\'s tokens are revoked at the authorization server when it has a revocation endpoint (RFC 7009), then deleted. The next call answers "Connect <server> first"',
        parameters: [name],
        responses: {
          200: { description: 'Disconnected', content: { 'application/json': { schema: schema(McpDisconnected) } } },
          ...errors(401, 404),
          409: json('The server is not one a person connects', 'Error'),
        },
      },
    },
    '/mcp/oauth/callback': {
      get: {
        operationId: 'mcpOAuthRedirect',
        summary:
          'The redirect URI Brigade registers: sends the browser on to the web client with code and state in the fragment (#mcp-oauth?code=…&state=…), which never reaches a server log; the web client then calls GET /v1/mcp/oauth/callback',
        security: [],
        responses: { 303: { description: 'To the web client' } },
      },
    },
  };
}

/** Agents on a schedule (issue 48). */
function schedulePaths(catalog: ServerCatalog): Record<string, unknown> {
  // the bodies' shapes; the minimum interval is a setting (SCHEDULE_MIN_INTERVAL), checked per deployment
  const shapes = { SCHEDULE_MIN_INTERVAL: 0 };
  const scheduleId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
  const one = { 'application/json': { schema: schema(ScheduleView) } };
  return {
    '/v1/schedules': {
      post: {
        operationId: 'createSchedule',
        summary:
          'Make a schedule: the text is sent to the agent as the caller every so often (every: a duration, at least SCHEDULE_MIN_INTERVAL) or at a ' +
          "cron expression's times (UTC; runs closer together than SCHEDULE_MIN_INTERVAL are refused), into a new conversation per run or into " +
          "conversationId (one of the caller's, of that agent). Each is a Temporal Schedule; a run still going when the next is due is skipped. A run " +
          'acts as a personal API key of its owner would: an owner disabled, gone from API_TOKENS, not seen for AUTH_API_KEY_OWNER_UNSEEN or without ' +
          "the agent's role pauses the schedule (pausedReason says why). A run into a conversation with an open item or a running turn is skipped " +
          '(lastRun says so), never a decision; a turn that parks on an approval waits for the person. 409 past SCHEDULE_MAX_PER_USER.',
        requestBody: { required: true, content: { 'application/json': { schema: schema(createScheduleBody(catalog, shapes), 'input') } } },
        responses: { 201: { description: 'The schedule', content: one }, ...errors(400, 401, 403, 409, 503) },
      },
      get: {
        operationId: 'listSchedules',
        summary: "The caller's schedules, oldest first, each with its next run and its latest run (and that run's conversation)",
        responses: {
          200: { description: 'Schedules', content: { 'application/json': { schema: schema(ScheduleList) } } },
          ...errors(401, 503),
        },
      },
    },
    '/v1/schedules/{id}': {
      patch: {
        operationId: 'updateSchedule',
        summary:
          "Pause or resume a schedule (resuming checks the agent's role again and clears pausedReason), or give it a new every or cron. Another user's is 404.",
        parameters: [scheduleId],
        requestBody: { required: true, content: { 'application/json': { schema: schema(patchScheduleBody(shapes), 'input') } } },
        responses: { 200: { description: 'The schedule', content: one }, ...errors(400, 401, 403, 404, 503) },
      },
      delete: {
        operationId: 'deleteSchedule',
        summary: "Delete a schedule and its Temporal Schedule; the conversations its runs made stay. Another user's is 404.",
        parameters: [scheduleId],
        responses: { 204: { description: 'Deleted' }, ...errors(401, 404, 503) },
      },
    },
  };
}

/** Personal API keys and the web client's sign-in through the server (issue 34). */
function signInPaths(): Record<string, unknown> {
  const keyId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
  return {
    '/v1/api-keys': {
      post: {
        operationId: 'createApiKey',
        summary:
          'Make a personal API key (brg_…) for scripts. The key is in this answer only; it is stored as a digest. It acts as its owner with the smaller of ' +
          "the roles given here (default: all of them) and the roles recorded for the owner, within its scopes (default: the owner's conversations only; " +
          '"keys", "erase", "export" and "operator" only when asked for here, and only ones the caller holds, else 400), and stops working when it ' +
          "expires, is deleted, its owner is disabled, its owner's API_TOKENS entry is gone (at the next API start), or a provider's person has not " +
          'signed in for AUTH_API_KEY_OWNER_UNSEEN. An API key needs the "keys" scope to make keys (403 without it); the key it makes has no more ' +
          'roles or scopes than it, expires no later, and is revoked with it.',
        ...keyScopes('keys'),
        requestBody: { required: true, content: { 'application/json': { schema: schema(CreateApiKeyBody, 'input') } } },
        responses: {
          201: { description: 'The key, shown once', content: { 'application/json': { schema: schema(CreatedApiKey) } } },
          ...errors(400, 401, 503),
          ...scopeRefused(undefined, 'keys'),
        },
      },
      get: {
        operationId: 'listApiKeys',
        summary: "The caller's API keys, without secrets, newest first, each with its scopes",
        ...keyScopes('keys'),
        responses: {
          200: { description: 'Keys', content: { 'application/json': { schema: schema(ApiKeyList) } } },
          ...errors(401, 503),
          ...scopeRefused(undefined, 'keys'),
        },
      },
    },
    '/v1/api-keys/{id}': {
      delete: {
        operationId: 'revokeApiKey',
        summary:
          "Revoke a key (and the keys it made): the next request with it answers 401 from every API process. Another user's key is 404.",
        ...keyScopes('keys'),
        parameters: [keyId],
        responses: { 204: { description: 'Revoked' }, ...errors(401, 404, 503), ...scopeRefused(undefined, 'keys') },
      },
    },
    '/auth/session': {
      get: {
        operationId: 'getSignInSession',
        summary:
          'How the web client signs in (signIn: oidc or token); whether a live session cookie came (cookieSession) and whether this request proved it with X-Brigade-Session-Proof (signedIn). Never the proof itself',
        security: [],
        responses: { 200: { description: '{ signIn, signedIn, cookieSession }' } },
      },
    },
    '/auth/login': {
      get: {
        operationId: 'startSignIn',
        summary: 'With AUTH_OIDC_CLIENT_ID: redirects to the provider (Authorization Code with PKCE); returnTo is a path on this site',
        security: [],
        parameters: [{ name: 'returnTo', in: 'query', required: false, schema: { type: 'string' } }],
        responses: { 302: { description: 'To the provider' }, 503: json('The provider cannot be reached', 'Error') },
      },
    },
    '/auth/callback': {
      get: {
        operationId: 'finishSignIn',
        summary:
          "The provider's redirect back: sets the session cookie (HttpOnly, Secure, SameSite=Strict) and redirects to returnTo with the session's proof in the fragment (#session-proof=…), which every request made with the cookie must send as X-Brigade-Session-Proof",
        security: [],
        responses: {
          302: { description: 'Signed in' },
          400: json('Not a sign-in started here', 'Error'),
          401: json('The tokens were refused', 'Error'),
        },
      },
    },
    '/auth/logout': {
      post: {
        operationId: 'signOut',
        summary:
          "Clears the session cookie; with X-Brigade-Session-Proof it also ends the session everywhere, and endSessionUrl is the provider's sign-out to navigate to, when it has one",
        security: [],
        responses: { 200: { description: '{ endSessionUrl }' } },
      },
    },
  };
}

/** Stop and export (issue 22); delete sits with GET /v1/conversations/{id}. */
function lifecyclePaths(): Record<string, unknown> {
  return {
    '/v1/conversations/{id}/stop': {
      post: {
        operationId: 'stopTurn',
        summary:
          'Stop the running turn within a second: the model call in flight is cancelled (its stream closed), tools are cancelled where they can be, ' +
          'items the turn waits on are withdrawn (closedAs withdrawn). What streamed stays in the transcript with stopped: true, and the waiting messages ' +
          'call answers with stopped: true. A child workflow that already started (a save pipeline) is not cancelled: it finishes on its own and its result is not added. ' +
          'Idempotent: with no turn running it answers stopped: false; when the run has ended or is stuck, stopped: false with status interrupted (the next message revives it).',
        parameters: [idParam],
        responses: {
          200: {
            description: 'Whether a turn was stopped',
            content: { 'application/json': { schema: schema(StopResultBody) } },
          },
          ...errors(401, 403, 404, 500, 503),
        },
      },
    },
    '/v1/conversations/{id}/export': {
      get: {
        operationId: 'exportConversation',
        summary:
          'The whole conversation as a download (Content-Disposition: attachment): its transcript, every tool call with arguments and result, and every decision ' +
          '(pending.opened, pending.closed and turn.stopped events). JSON by default, or Markdown for reading.',
        parameters: [idParam, { name: 'format', in: 'query', required: false, schema: schema(ExportQuery.shape.format, 'input') }],
        responses: {
          200: {
            description: 'The export',
            content: { 'application/json': { schema: schema(ExportBody) }, 'text/markdown': { schema: { type: 'string' } } },
          },
          ...errors(400, 401, 403, 404, 503),
        },
      },
    },
  };
}

/** A person's data (issue 35) and the codec server the Temporal Web UI and CLI use. */
function protectionPaths(): Record<string, unknown> {
  const userParam = {
    name: 'user',
    in: 'path',
    required: true,
    description: 'the user id of their tokens',
    schema: { type: 'string', maxLength: 200 },
  };
  const exportResponse = { description: 'The export', content: { 'application/json': { schema: schema(PersonalExport) } } };
  const codec = (action: string, summary: string) => ({
    post: {
      operationId: `${action}Payloads`,
      summary: `${summary}; an API key also needs the "operator" scope`,
      ...keyScopes('operator'),
      parameters: [
        {
          name: 'X-Namespace',
          in: 'header',
          required: false,
          description: "the Temporal namespace (another than Brigade's is 404)",
          schema: { type: 'string' },
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: schema(CodecBody, 'input') } } },
      responses: {
        200: { description: `The payloads, ${action}d, in order`, content: { 'application/json': { schema: schema(CodecBody) } } },
        ...errors(400, 401, 404, 413, 415),
        ...scopeRefused('operator', 'operator'),
      },
    },
  });
  return {
    '/v1/me/export': {
      get: {
        operationId: 'exportMyData',
        summary:
          'Everything Brigade holds of the caller, as one JSON download: every conversation (as GET /v1/conversations/{id}/export), usage rows, ' +
          'and what each agent keeps (savedRecipes). An API key needs the "export" scope.',
        ...keyScopes('export'),
        responses: { 200: exportResponse, ...errors(401, 503), ...scopeRefused(undefined, 'export') },
      },
    },
    '/v1/me': {
      delete: {
        operationId: 'eraseMyData',
        summary:
          'Erase everything of the caller: conversations with their files and Temporal executions (deleted, children too), saved recipes with their ' +
          'images, usage rows (kept only as anonymous daily totals) and idempotency keys. Answers 204 when done; repeating it is harmless. ' +
          'An API key needs the "erase" scope.',
        ...keyScopes('erase'),
        responses: { 204: { description: 'Erased' }, ...errors(401, 503), ...scopeRefused(undefined, 'erase') },
      },
    },
    '/v1/users/{user}/export': {
      get: {
        operationId: 'exportUserData',
        summary: "An operator's GET /v1/me/export for a given user (role operator; an API key also needs the scopes operator and export)",
        ...keyScopes('operator', 'export'),
        parameters: [userParam],
        responses: { 200: exportResponse, ...errors(401, 503), ...scopeRefused('operator', 'operator', 'export') },
      },
    },
    '/v1/users/{user}': {
      delete: {
        operationId: 'eraseUserData',
        summary:
          "An operator's DELETE /v1/me for a given user (role operator; an API key also needs the scopes operator and erase); answers what was erased, by kind",
        ...keyScopes('operator', 'erase'),
        parameters: [userParam],
        responses: {
          200: { description: 'Erased', content: { 'application/json': { schema: schema(ErasureReport) } } },
          ...errors(401, 503),
          ...scopeRefused('operator', 'operator', 'erase'),
        },
      },
    },
    '/codec/decode': codec(
      'decode',
      "Temporal's codec server protocol: decrypt payloads for the Web UI or `temporal --codec-endpoint` (the operator role, by bearer token only: the Web UI's own access token or an operator's key; never a cookie)",
    ),
    '/codec/encode': codec(
      'encode',
      "Temporal's codec server protocol: encrypt payloads the Web UI or CLI sends (the operator role, by bearer token only: the Web UI's own access token or an operator's key; never a cookie)",
    ),
  };
}
