// MCP tools as activities: the list of an agent's tools (recorded in history, so a replay never asks a server),
// and one call. A call is at-least-once: its result and tool message are recorded by call id once it returns,
// and an attempt that finds that record returns it without calling again; but a worker that dies while the
// server works leaves no record, and the retry calls the server again. Each call therefore carries an
// idempotency key in `_meta` (`io.brigade/idempotency-key`: `<conversationId>:<callId>`, the same on every
// attempt) for servers that honour one. A tool error (`isError`) or a protocol error is the tool's result for
// the model; only an unreachable server is retried, and after the last attempt that too becomes a result.
import { conversationFilesPrefix } from '../shared/conversation-files.ts';
import { Context } from '@temporalio/activity';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { recordToolCall, withToolCall } from '../db/tool-calls.ts';
import { McpConnections, type Elicit } from '../mcp/connections.ts';
import { loadMcpConfig } from '../mcp/config.ts';
import type { McpActivities, McpCallInput, McpCallResult, McpListToolsInput, McpServerTools } from '../mcp/types.ts';
import type { JsonObject } from '../shared/messages.ts';
import { storableJson } from '../shared/safe-text.ts';
import { type ObjectStore, createObjectStore } from '../storage/index.ts';
import { askWorkflow } from '../mcp/elicitation.ts';
import { argumentsRefusal } from '../mcp/pattern-check.ts';

export const IDEMPOTENCY_META_KEY = 'io.brigade/idempotency-key';

export interface McpActivityDeps {
  pool: pg.Pool;
  config: Config;
  /** the worker's connections (closed with the worker); made from the config when not given */
  mcp?: McpConnections;
}

export function createMcpActivities({ pool, config, mcp }: McpActivityDeps): McpActivities {
  const connections = mcp ?? new McpConnections(loadMcpConfig(config.BRIGADE_MCP_CONFIG));
  let store: ObjectStore | undefined;
  const objects = () => (store ??= createObjectStore(config));

  async function mcpListTools({ agent, servers, known = {} }: McpListToolsInput): Promise<McpServerTools[]> {
    const lists: McpServerTools[] = [];
    for (const name of servers) {
      try {
        const server = connections.server(name);
        if (!(server.agents as string[]).includes(agent)) throw new Error(`the ${agent} agent may not use it any more`);
        const list = await connections.listTools(name);
        lists.push(known[name] === list.hash ? { server: name, hash: list.hash, tools: [], unchanged: true } : list);
      } catch (error) {
        // A server that is down costs its tools for now, not the conversation: the next list tries again.
        lists.push({ server: name, hash: '', tools: [], error: error instanceof Error ? error.message : String(error) });
      }
    }
    return lists;
  }

  async function mcpCallTool(input: McpCallInput): Promise<McpCallResult> {
    const { conversationId, userId, callId } = input;
    const ref = { conversationId, userId, callId };
    const earlier = await withToolCall(pool, ref, async (_db, found) => found);
    if (earlier) return { result: earlier.result as JsonObject };

    const context = Context.current();
    const server = connections.server(input.server);
    const beat = setInterval(() => context.heartbeat(), Math.max(200, (context.info.heartbeatTimeoutMs ?? 3000) / 3));
    let questions = 0;
    const elicit: Elicit = async (request) =>
      askWorkflow(context, {
        requestId: `${callId}.q${context.info.attempt}.${(questions += 1)}`,
        callId,
        tool: input.name,
        server: input.server,
        message: request.message,
        schema: request.schema,
        deadlineMs: server.questionDeadline,
      });
    let result: JsonObject;
    try {
      // The workflow checked the arguments without the schema's patterns (src/mcp/json-schema.ts); here the
      // whole schema is checked, patterns with RE2, and a refusal is the tool's result for the model.
      const listed = (await connections.listTools(input.server)).tools.find((tool) => tool.tool === input.tool);
      const refusal = listed && argumentsRefusal(listed.inputSchema, input.args);
      if (refusal) throw new ArgumentsRefused(`The arguments do not fit ${input.name}, so it was not called: ${refusal}`);
      const raw = await connections.callTool(
        input.server,
        { tool: input.tool, args: input.args, meta: { [IDEMPOTENCY_META_KEY]: `${conversationId}:${callId}` } },
        { signal: context.cancellationSignal, timeoutMs: server.callTimeout + server.questionDeadline, elicit },
      );
      result = await forModel(raw, input, objects);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const refused = error instanceof ArgumentsRefused;
      const unreachable = !refused && (!(error instanceof McpError) || error.code === -32000 || error.code === -32001);
      if (unreachable && context.info.attempt < server.maxAttempts && !context.cancellationSignal.aborted) throw error;
      result = { error: refused ? message : unreachable ? `The MCP server ${input.server} could not be reached (${message}).` : `MCP server ${input.server}: ${message}` };
    } finally {
      clearInterval(beat);
    }
    const stored = storableJson(result) as JsonObject;
    const recorded = await withToolCall(pool, ref, async (db, found) => {
      if (found) return found.result as JsonObject;
      await recordToolCall(db, ref, { tool: input.name, args: input.args, result: stored });
      return stored;
    });
    const hash = await connections.currentHash(input.server);
    return { result: recorded, ...(input.listHash && hash && hash !== input.listHash ? { toolsChanged: true } : {}) };
  }

  return { mcpListTools, mcpCallTool };
}

/** Arguments that do not fit the tool's whole schema: the call's result, never sent to the server. */
class ArgumentsRefused extends Error {}

/**
 * The call's content as the model's result: text joined, structured content as it is, images, audio and
 * embedded binary resources stored like other files and referenced by URL, resource links by URI.
 */
async function forModel(raw: CallToolResult, input: McpCallInput, objects: () => ObjectStore): Promise<JsonObject> {
  const texts: string[] = [];
  const files: JsonObject[] = [];
  const store = async (index: number, data: string, mimeType: string) => {
    const extension = (mimeType.split('/')[1] ?? 'bin').replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin';
    const key = `${conversationFilesPrefix(input.conversationId)}${input.callId}-${index}.${extension}`;
    await objects().put(key, Buffer.from(data, 'base64'), mimeType);
    return objects().publicUrl(key);
  };
  for (const [index, part] of (raw.content ?? []).entries()) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'image' || part.type === 'audio') {
      files.push({ type: part.type, mimeType: part.mimeType, url: await store(index, part.data, part.mimeType) });
    } else if (part.type === 'resource') {
      const resource = part.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
      if (resource.text !== undefined) files.push({ type: 'resource', uri: resource.uri, ...(resource.mimeType ? { mimeType: resource.mimeType } : {}), text: resource.text });
      else if (resource.blob !== undefined) {
        const mimeType = resource.mimeType ?? 'application/octet-stream';
        files.push({ type: 'resource', uri: resource.uri, mimeType, url: await store(index, resource.blob, mimeType) });
      }
    } else if (part.type === 'resource_link') {
      files.push({ type: 'resource_link', uri: part.uri, name: part.name, ...(part.mimeType ? { mimeType: part.mimeType } : {}) });
    }
  }
  const text = texts.join('\n');
  return {
    ...(raw.isError ? { error: text || 'The tool reported an error.' } : text ? { text } : {}),
    ...(raw.structuredContent ? { structured: raw.structuredContent } : {}),
    ...(files.length ? { files } : {}),
  };
}
