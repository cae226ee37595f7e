// A small MCP server built with @modelcontextprotocol/sdk, the same tools over stdio (mcp-stdio-server.ts, a
// child of the worker) and Streamable HTTP (startKitchenHttp, in the test's process):
//   lookup_pantry     read-only (readOnlyHint): text and structured content
//   order_groceries   changes something: needs approval under the default policy
//   broken_oven       always fails (isError)
//   confirm_delivery  asks the user which day (elicitation) and says what it was told
//   plan_menu         asks a question of every type the spec's form schema allows, with defaults (MENU_SCHEMA),
//                     and answers with the content it received, as JSON
//   photo_of_dish     answers with an image and a resource link
//   power_cut         (stdio only) the server's process dies mid-call
// Every call is reported to `onCall` with its arguments and the idempotency key from `_meta`.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface KitchenCall {
  tool: string;
  args: Record<string, unknown>;
  key: string | undefined;
}

export interface KitchenHooks {
  onCall(call: KitchenCall): void;
  /** awaited before order_groceries answers (a test holds a call there) */
  beforeOrder?: () => Promise<void>;
  /** given: a power_cut tool that calls it (the stdio server exits) */
  powerCut?: () => void;
  /** the content of each accepted answer to plan_menu's question, as the server received it */
  onMenuAnswer?: (content: Record<string, unknown>) => void;
}

const IDEMPOTENCY = 'io.brigade/idempotency-key';
export const ONE_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export function buildKitchen(hooks: KitchenHooks): McpServer {
  const server = new McpServer({ name: 'kitchen', version: '1.0.0' });
  const seen = (tool: string, args: Record<string, unknown>, extra: { _meta?: Record<string, unknown> }) =>
    hooks.onCall({ tool, args, key: extra._meta?.[IDEMPOTENCY] as string | undefined });

  server.registerTool(
    'lookup_pantry',
    {
      title: 'Look up the pantry',
      description: 'How much of an ingredient is in the pantry.',
      inputSchema: { ingredient: z.string().min(1).describe('an ingredient, e.g. flour') },
      outputSchema: { ingredient: z.string(), grams: z.number() },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      seen('lookup_pantry', args, extra);
      const structured = { ingredient: args.ingredient, grams: 500 };
      return { content: [{ type: 'text', text: `There are 500 g of ${args.ingredient}.` }], structuredContent: structured };
    },
  );

  server.registerTool(
    'order_groceries',
    {
      description: 'Orders groceries for delivery.',
      inputSchema: { item: z.string().min(1), quantity: z.number().int().min(1).max(20) },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args, extra) => {
      seen('order_groceries', args, extra);
      await hooks.beforeOrder?.();
      return { content: [{ type: 'text', text: `Ordered ${args.quantity} × ${args.item}.` }] };
    },
  );

  server.registerTool(
    'broken_oven',
    { description: 'Preheats the oven.', inputSchema: { celsius: z.number() }, annotations: { readOnlyHint: true } },
    async (args, extra) => {
      seen('broken_oven', args, extra);
      return { isError: true, content: [{ type: 'text', text: 'The oven is out of order.' }] };
    },
  );

  if (hooks.powerCut) {
    const cut = hooks.powerCut;
    server.registerTool(
      'power_cut',
      { description: 'Cuts the power.', inputSchema: {}, annotations: { readOnlyHint: true } },
      async (args, extra) => {
        seen('power_cut', args, extra);
        cut();
        return { content: [] };
      },
    );
  }

  server.registerTool(
    'photo_of_dish',
    { description: 'A photo of a dish.', inputSchema: { dish: z.string() }, annotations: { readOnlyHint: true } },
    async (args, extra) => {
      seen('photo_of_dish', args, extra);
      return {
        content: [
          { type: 'text', text: `A photo of ${args.dish}.` },
          { type: 'image', data: ONE_PIXEL_PNG, mimeType: 'image/png' },
          { type: 'resource_link', uri: 'https://kitchen.example/recipes/1', name: 'the recipe' },
        ],
      };
    },
  );

  server.registerTool(
    'confirm_delivery',
    {
      description: 'Books a delivery slot; asks the user which day.',
      inputSchema: { order: z.string() },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      seen('confirm_delivery', args, extra);
      const answer = await server.server.elicitInput({
        mode: 'form',
        message: 'Which day should we deliver?',
        requestedSchema: {
          type: 'object',
          properties: { day: { type: 'string', enum: ['monday', 'tuesday'], description: 'delivery day' } },
          required: ['day'],
        },
      });
      const text =
        answer.action === 'accept' ? `Delivery booked for ${String(answer.content?.day)}.` : `No delivery booked (${answer.action}).`;
      return { content: [{ type: 'text', text }] };
    },
  );
  server.registerTool(
    'plan_menu',
    {
      description: 'Plans a menu; asks the user about the guests.',
      inputSchema: { occasion: z.string() },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      seen('plan_menu', args, extra);
      const answer = await server.server.elicitInput({ mode: 'form', message: 'Tell us about the dinner', requestedSchema: MENU_SCHEMA });
      if (answer.action === 'accept') hooks.onMenuAnswer?.(answer.content ?? {});
      const text = answer.action === 'accept' ? `Menu answer: ${JSON.stringify(answer.content)}` : `No menu (${answer.action}).`;
      return { content: [{ type: 'text', text }] };
    },
  );
  return server;
}

/** plan_menu's question: each type of the spec's restricted schema, most with a default. */
export const MENU_SCHEMA = {
  type: 'object' as const,
  properties: {
    guests: { type: 'integer' as const, title: 'Guests', minimum: 1, maximum: 12, default: 4 },
    budget: { type: 'number' as const, title: 'Budget per head', minimum: 0, default: 25.5 },
    vegetarian: { type: 'boolean' as const, title: 'Vegetarian', default: true },
    course: {
      type: 'string' as const,
      title: 'Course',
      oneOf: [
        { const: 'starter', title: 'Starter' },
        { const: 'main', title: 'Main course' },
        { const: 'dessert', title: 'Dessert' },
      ],
      default: 'main',
    },
    cuisine: { type: 'string' as const, title: 'Cuisine', enum: ['thai', 'italian'], enumNames: ['Thai', 'Italian'], default: 'italian' },
    allergies: {
      type: 'array' as const,
      title: 'Allergies',
      items: {
        anyOf: [
          { const: 'nuts', title: 'Tree nuts' },
          { const: 'gluten', title: 'Gluten' },
          { const: 'dairy', title: 'Dairy' },
        ],
      },
      maxItems: 2,
      default: ['nuts'],
    },
    extras: { type: 'array' as const, title: 'Extras', items: { type: 'string' as const, enum: ['bread', 'wine', 'coffee'] } },
    host: { type: 'string' as const, title: 'Host', minLength: 2, maxLength: 40, default: 'Sam' },
    contact: { type: 'string' as const, title: 'Contact email', format: 'email' as const },
    day: { type: 'string' as const, title: 'Day', format: 'date' as const },
  },
  required: ['guests', 'course'],
};

export interface KitchenHttp {
  url: string;
  calls: KitchenCall[];
  /** the Authorization header of each request */
  authorizations: Set<string | undefined>;
  hooks: KitchenHooks;
  /** adds a tool to every session's server: each sends notifications/tools/list_changed */
  addTool(name: string): void;
  close(): Promise<void>;
}

/** The kitchen over Streamable HTTP, one session (server + transport) per client that initializes. */
export async function startKitchenHttp(): Promise<KitchenHttp> {
  const calls: KitchenCall[] = [];
  const authorizations = new Set<string | undefined>();
  const hooks: KitchenHooks = { onCall: (call) => void calls.push(call) };
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const httpServer = http.createServer(async (req, res) => {
    authorizations.add(req.headers.authorization);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    let session = sessionId ? sessions.get(sessionId) : undefined;
    if (!session) {
      if (sessionId || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      const server = buildKitchen(hooks);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await server.connect(transport);
      session = { transport, server };
    }
    await session.transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`,
    calls,
    authorizations,
    hooks,
    addTool(name) {
      for (const { server } of sessions.values()) {
        server.registerTool(
          name,
          { description: `A tool added later: ${name}.`, inputSchema: {}, annotations: { readOnlyHint: true } },
          async () => ({
            content: [{ type: 'text', text: `${name} ran` }],
          }),
        );
      }
    },
    async close() {
      for (const { transport } of sessions.values()) await transport.close().catch(() => undefined);
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}
