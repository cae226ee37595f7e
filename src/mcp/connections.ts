// The worker's connections to MCP servers: a stdio server is a child process of the worker, started on first
// use and started again on the next use after it dies; an HTTP server keeps its Streamable HTTP session. Each
// server's tool list is cached until the server says it changed (notifications/tools/list_changed). close()
// stops them all with the worker. Header and env values with `${NAME}` are resolved here, at connect time,
// and never logged.
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../shared/messages.ts';
import { type McpServerConfig, withEnv } from './config.ts';
import { exposedName } from './names.ts';
import { policyFor } from './policy.ts';
import { toGeminiSchema } from './schema.ts';
import { linearSchemaValidator } from './pattern-check.ts';
import type { McpServerTools, McpToolDescriptor } from './types.ts';

/** Asks the user what the server asked (elicitation), for the call in flight. */
export type Elicit = (request: { message: string; schema: JsonObject }) => Promise<ElicitResult>;

interface Connection {
  client: Client;
  list?: McpServerTools;
  /** bumped by notifications/tools/list_changed */
  listVersion: number;
  /** calls in flight on this connection, newest last: who an elicitation is for */
  calls: { elicit: Elicit }[];
  /** the process died or the session ended: the next use connects again */
  closed: boolean;
}

const VERSION = '0.1.0';

export class McpConnections {
  readonly #servers: Map<string, McpServerConfig>;
  readonly #open = new Map<string, Promise<Connection>>();
  #closed = false;

  constructor(servers: readonly McpServerConfig[]) {
    this.#servers = new Map(servers.map((server) => [server.name, server]));
  }

  server(name: string): McpServerConfig {
    const server = this.#servers.get(name);
    if (!server) throw new Error(`No MCP server "${name}" in BRIGADE_MCP_CONFIG`);
    return server;
  }

  async #connection(name: string): Promise<Connection> {
    if (this.#closed) throw new Error('The worker is stopping');
    let open = this.#open.get(name);
    if (open && (await open.catch(() => undefined))?.closed) {
      if (this.#open.get(name) === open) this.#open.delete(name);
      open = this.#open.get(name);
    }
    if (!open) {
      open = this.#connect(this.server(name));
      this.#open.set(name, open);
      // A failed start is forgotten, so the next use (the activity's retry) tries again.
      open.catch(() => this.#open.get(name) === open && this.#open.delete(name));
    }
    return open;
  }

  async #connect(server: McpServerConfig): Promise<Connection> {
    // The client checks structuredContent against the tool's outputSchema: with RE2, never a backtracking RegExp.
    const client = new Client(
      { name: 'brigade', version: VERSION },
      // applyDefaults (SEP-1034): an accepted answer carries the schema's defaults for what the person left
      // out; the workflow fills them (src/shared/elicitation-answer.ts) before it checks the answer.
      { capabilities: { elicitation: { form: { applyDefaults: true } } }, jsonSchemaValidator: linearSchemaValidator() },
    );
    const connection: Connection = { client, listVersion: 0, calls: [], closed: false };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      connection.listVersion += 1;
      connection.list = undefined;
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { message: string; requestedSchema?: JsonObject; mode?: string };
      const call = connection.calls.at(-1);
      // Only form elicitation during one of our calls can be put to a user; anything else is declined.
      if (!call || (params.mode && params.mode !== 'form')) return { action: 'decline' };
      return call.elicit({ message: params.message, schema: params.requestedSchema ?? { type: 'object', properties: {} } });
    });
    const transport =
      server.transport === 'stdio'
        ? new StdioClientTransport({
            command: server.command,
            args: server.args,
            env: { ...getDefaultEnvironment(), ...withEnv(server.env) },
            ...(server.cwd ? { cwd: server.cwd } : {}),
            stderr: 'inherit',
          })
        : new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: withEnv(server.headers) } });
    // A process that died or a session that ended is dropped: the next use starts a new one.
    client.onclose = () => {
      connection.closed = true;
    };
    await client.connect(transport, { timeout: server.callTimeout });
    return connection;
  }

  /** The server's tools as the agent sees them, from the cache unless the server said the list changed. */
  async listTools(name: string): Promise<McpServerTools> {
    const connection = await this.#connection(name);
    if (connection.list) return connection.list;
    const version = connection.listVersion;
    const server = this.server(name);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await connection.client.listTools(cursor ? { cursor } : {}, { timeout: server.callTimeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const descriptors = tools.map((tool) => describe(server, tool));
    const list: McpServerTools = { server: name, hash: hashOf(descriptors), tools: descriptors };
    if (connection.listVersion === version) connection.list = list;
    return list;
  }

  /** The current list's hash, when known (a list_changed notification forgets it). */
  async currentHash(name: string): Promise<string | undefined> {
    const open = this.#open.get(name);
    const connection = open && (await open.catch(() => undefined));
    if (!connection || connection.closed) return undefined;
    return connection.list?.hash ?? 'changed';
  }

  async callTool(
    name: string,
    request: { tool: string; args: JsonObject; meta: JsonObject },
    options: { signal: AbortSignal; timeoutMs: number; elicit: Elicit },
  ): Promise<CallToolResult> {
    const connection = await this.#connection(name);
    const call = { elicit: options.elicit };
    connection.calls.push(call);
    try {
      return (await connection.client.callTool(
        { name: request.tool, arguments: request.args, _meta: request.meta },
        CallToolResultSchema,
        // An elicitation pauses the call on the user: its wait is not the server's slowness.
        { signal: options.signal, timeout: options.timeoutMs, maxTotalTimeout: undefined, resetTimeoutOnProgress: true },
      )) as CallToolResult;
    } finally {
      connection.calls.splice(connection.calls.indexOf(call), 1);
    }
  }

  /** Stops every stdio server and ends every HTTP session. */
  async close(): Promise<void> {
    this.#closed = true;
    const open = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(
      open.map(async (opening) => {
        const connection = await opening.catch(() => undefined);
        if (!connection) return;
        const transport = connection.client.transport;
        if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
        await connection.client.close().catch(() => undefined);
      }),
    );
  }
}

function describe(server: McpServerConfig, tool: Tool): McpToolDescriptor {
  const readOnly = tool.annotations?.readOnlyHint === true;
  const description = [tool.title && tool.title !== tool.name ? tool.title : '', tool.description ?? ''].filter(Boolean).join(': ');
  return {
    name: exposedName(server.name, tool.name),
    server: server.name,
    tool: tool.name,
    description: `${description || tool.name} (MCP server ${server.name})`,
    parameters: toGeminiSchema(tool.inputSchema),
    inputSchema: tool.inputSchema as JsonObject,
    readOnly,
    policy: policyFor(server, tool.name, readOnly),
    callTimeoutMs: server.callTimeout,
    questionDeadlineMs: server.questionDeadline,
    maxAttempts: server.maxAttempts,
  };
}

const hashOf = (descriptors: McpToolDescriptor[]) => createHash('sha256').update(JSON.stringify(descriptors)).digest('hex').slice(0, 16);
