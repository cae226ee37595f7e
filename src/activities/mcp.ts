// MCP tools as activities: the list of an agent's tools (recorded in history, so a replay never asks a server),
// and one call. A call is at-least-once: its result and tool message are recorded by call id once it returns,
// and an attempt that finds that record returns it without calling again; but a worker that dies while the
// server works leaves no record, and the retry calls the server again. Each call therefore carries an
// idempotency key in `_meta` (`io.brigade/idempotency-key`: `<conversationId>:<callId>`, the same on every
// attempt) for servers that honour one. A tool error (`isError`) or a protocol error is the tool's result for
// the model; an unreachable server is retried (maxAttempts), a server that did not answer within callTimeout
// only as its timeoutAttempts say, and after the last attempt either becomes a result that says which.
import { conversationFilesPrefix } from '../shared/conversation-files.ts';
import { Context } from '@temporalio/activity';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { recordToolCall, withToolCall } from '../db/tool-calls.ts';
import { McpConnections, type Elicit } from '../mcp/connections.ts';
import { isPerPerson, loadMcpConfig } from '../mcp/config.ts';
import { ConnectFirst, asConnectFirst } from '../mcp/oauth-errors.ts';
import { wantScope } from '../db/mcp-oauth.ts';
import { dataKeyOfWorkflow } from '../db/data-keys.ts';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import type { McpActivities, McpCallInput, McpCallResult, McpListToolsInput, McpServerTools } from '../mcp/types.ts';
import type { JsonObject } from '../shared/messages.ts';
import { storableJson } from '../shared/safe-text.ts';
import { type ObjectStore, createObjectStore } from '../storage/index.ts';
import { askWorkflow } from '../mcp/elicitation.ts';
import { cutText, jsonBytes, resultForWorkflow, utf8Bytes } from '../shared/payload-bounds.ts';
import { capToolResult } from './tool-result-cap.ts';
import { serverCallStopped } from '../shared/stopped-call.ts';
import { boundedLabel, metrics } from '../telemetry/metrics.ts';

/** A call's own deadline that a question pauses: `signal` aborts once `ms` of the server's time have passed. */
class CallClock {
  readonly #controller = new AbortController();
  readonly signal = this.#controller.signal;
  #left: number;
  #since = Date.now();
  #timer: NodeJS.Timeout | undefined;
  timedOut = false;

  constructor(ms: number) {
    this.#left = ms;
    this.resume();
  }

  pause(): void {
    if (!this.#timer) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#left -= Date.now() - this.#since;
  }

  resume(): void {
    if (this.#timer || this.timedOut) return;
    this.#since = Date.now();
    this.#timer = setTimeout(
      () => {
        this.timedOut = true;
        this.#controller.abort(new Error('The MCP call timed out'));
      },
      Math.max(0, this.#left),
    );
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`);
import { argumentsRefusal } from '../mcp/pattern-check.ts';

export const IDEMPOTENCY_META_KEY = 'io.brigade/idempotency-key';

// What a server says crosses Temporal (the list is an activity result, recorded, and handed to every model
// step; a question is a signal and a pending item): bounded here, whatever the server sends.
export const QUESTION_MESSAGE_MAX_BYTES = 4 * 1024;
export const QUESTION_SCHEMA_MAX_BYTES = 16 * 1024;
export const TOOL_DESCRIPTION_MAX_BYTES = 2 * 1024;
export const TOOL_SCHEMA_MAX_BYTES = 16 * 1024;
export const TOOL_LIST_MAX_BYTES = 256 * 1024;
export const ERROR_MAX_BYTES = 2 * 1024;

/**
 * A server's list within bounds: descriptions cut, a tool whose schema is too large left out (the model could
 * not use it well anyway), and tools past the list's budget left out, each named in `error`.
 */
export function boundedList(list: McpServerTools): McpServerTools {
  const tools: McpServerTools['tools'] = [];
  const left: string[] = [];
  let spent = 0;
  for (const tool of list.tools) {
    const bounded = { ...tool, description: cutText(tool.description, TOOL_DESCRIPTION_MAX_BYTES) };
    const size = jsonBytes(bounded);
    if (
      jsonBytes(tool.inputSchema) > TOOL_SCHEMA_MAX_BYTES ||
      jsonBytes(tool.parameters) > TOOL_SCHEMA_MAX_BYTES ||
      spent + size > TOOL_LIST_MAX_BYTES
    ) {
      left.push(cutText(tool.name, 100));
      continue;
    }
    spent += size;
    tools.push(bounded);
  }
  if (!left.length && tools.every((tool, index) => tool.description === list.tools[index]!.description)) return list;
  return {
    ...list,
    tools,
    ...(left.length
      ? { error: `${left.length} tool(s) left out, too large to offer: ${left.slice(0, 10).join(', ')}${left.length > 10 ? ', …' : ''}` }
      : {}),
  };
}

export interface McpActivityDeps {
  /** which agents a BRIGADE_MCP_CONFIG may name */
  catalog: AgentCatalog;
  pool: pg.Pool;
  config: Config;
  /** the worker's connections (closed with the worker); made from the config when not given */
  mcp?: McpConnections;
}

export function createMcpActivities({ catalog, pool, config, mcp }: McpActivityDeps): McpActivities {
  const connections = mcp ?? new McpConnections(loadMcpConfig(config.BRIGADE_MCP_CONFIG, catalog));
  let store: ObjectStore | undefined;
  const objects = () => (store ??= createObjectStore(config));

  /** The conversation's owner, for per-person servers: their token alone is used for its calls. */
  const ownerOf = async (workflowId: string) => (await dataKeyOfWorkflow(pool, workflowId))?.userId;

  async function mcpListTools({ agent, servers, known = {} }: McpListToolsInput): Promise<McpServerTools[]> {
    const lists: McpServerTools[] = [];
    const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
    let owner: Promise<string | undefined> | undefined;
    for (const name of servers) {
      try {
        const server = connections.server(name);
        if (!(server.agents as string[]).includes(agent)) throw new Error(`the ${agent} agent may not use it any more`);
        const user = isPerPerson(server) ? await (owner ?? (owner = ownerOf(workflowId))) : undefined;
        if (isPerPerson(server) && !user) throw new Error('this conversation has no owner to connect it');
        const list = boundedList(await connections.listTools(name, user));
        lists.push(known[name] === list.hash ? { server: name, hash: list.hash, tools: [], unchanged: true } : list);
      } catch (caught) {
        const error = asConnectFirst(caught, name);
        if (error instanceof ConnectFirst) {
          // Its tools stay offered; a call answers how to connect. Listed again before the next model step.
          const user = await (owner ?? (owner = ownerOf(workflowId))).catch(() => undefined);
          lists.push({ ...boundedList(connections.offeredUnconnected(name, user)), error: error.message });
          continue;
        }
        // A server that is down costs its tools for now, not the conversation: the next list tries again.
        // (cut: a server writes its own error messages, and the list crosses Temporal)
        lists.push({
          server: name,
          hash: '',
          tools: [],
          error: cutText(error instanceof Error ? error.message : String(error), ERROR_MAX_BYTES),
        });
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
    // callTimeout bounds the server's own work: the clock stops while a question waits for the user (its own
    // deadline bounds that) and starts again once the server has the answer.
    const clock = new CallClock(server.callTimeout);
    let questions = 0;
    // A question crosses Temporal as a signal and a pending item: one too large to show is declined unasked.
    // While it waits for the user, the call's clock stops (callTimeout bounds the server's own work).
    const elicit: Elicit = async (request) => {
      if (jsonBytes(request.schema) > QUESTION_SCHEMA_MAX_BYTES) return { action: 'decline' };
      clock.pause();
      try {
        return await askWorkflow(context, {
          requestId: `${callId}.q${context.info.attempt}.${(questions += 1)}`,
          callId,
          tool: input.name,
          server: input.server,
          message: cutText(request.message, QUESTION_MESSAGE_MAX_BYTES),
          schema: request.schema,
          deadlineMs: server.questionDeadline,
        });
      } finally {
        clock.resume();
      }
    };
    let result: JsonObject;
    try {
      // The workflow checked the arguments without the schema's patterns (src/shared/json-schema.ts); here the
      // whole schema is checked, patterns with RE2, and a refusal is the tool's result for the model.
      const user = isPerPerson(server) ? userId : undefined;
      const listed = (await connections.listTools(input.server, user)).tools.find((tool) => tool.tool === input.tool);
      const refusal = listed && argumentsRefusal(listed.inputSchema, input.args);
      if (refusal) throw new ArgumentsRefused(`The arguments do not fit ${input.name}, so it was not called: ${refusal}`);
      const raw = await connections.callTool(
        input.server,
        { tool: input.tool, args: input.args, meta: { [IDEMPOTENCY_META_KEY]: `${conversationId}:${callId}` } },
        {
          signal: AbortSignal.any([stopOrShutdown(context), clock.signal]),
          // the SDK's own timeout is only a backstop: a question may hold the call up to its deadline
          timeoutMs: server.callTimeout + server.questionDeadline + 30_000,
          elicit,
          ...(user ? { user } : {}),
        },
      );
      result = await forModel(raw, input, objects);
    } catch (caught) {
      const error = asConnectFirst(caught, input.server);
      const stopped = context.cancellationSignal.aborted;
      // Stop (the workflow cancelled the call): the server may have gone on and finished it.
      // Arguments the whole schema refuses: the server never saw the call, and the model is told why.
      if (error instanceof ArgumentsRefused) result = { error: error.message };
      else if (error instanceof ConnectFirst) {
        // Not a failure to retry: the person acts first. A step-up's scope is what their next Connect asks for.
        if ('scope' in error.reason) await wantScope(pool, userId, input.server, error.reason.scope);
        // a cross-app server has no Connect: its words say to sign in again
        result =
          'signIn' in error.reason ? { error: error.message, signIn: input.server } : { error: error.message, connect: input.server };
      } else if (stopped && context.cancellationDetails?.cancelRequested) result = serverCallStopped();
      else if (stopped)
        throw error; // the worker stops or the attempt timed out: Temporal retries it
      else if (clock.timedOut) {
        if (context.info.attempt < Math.min(server.timeoutAttempts, server.maxAttempts)) throw error;
        result = {
          status: 'timeout',
          error: `The MCP server ${input.server} did not answer within ${seconds(server.callTimeout)} (timed out); it may still be working on it.`,
        };
      } else {
        const message = error instanceof Error ? error.message : String(error);
        const unreachable = !(error instanceof McpError) || error.code === -32000 || error.code === -32001;
        // Retried: the failure crosses Temporal with its message, which a server may have written, so it is cut.
        if (unreachable && context.info.attempt < server.maxAttempts) {
          throw utf8Bytes(message) > ERROR_MAX_BYTES ? new Error(`${cutText(message, ERROR_MAX_BYTES)}…`) : error;
        }
        result = {
          error: unreachable
            ? `The MCP server ${input.server} could not be reached (${message}).`
            : `MCP server ${input.server}: ${message}`,
        };
      }
    } finally {
      clearInterval(beat);
      clock.stop();
    }
    // counted by server, a name from BRIGADE_MCP_CONFIG: the server's own tool names are its to invent
    const label = boundedLabel('brigade_tool_calls_total', `mcp:${input.server}`);
    metrics.toolCalls.inc({ tool: label });
    if ('error' in result) metrics.toolErrors.inc({ tool: label });
    // Capped before it is recorded: the record, the transcript and the model hold the same, note included.
    const stored = capToolResult(storableJson(result), config.TOOL_RESULT_MAX_BYTES) as JsonObject;
    const recorded = await withToolCall(pool, ref, async (db, found) => {
      if (found) return found.result as JsonObject;
      await recordToolCall(db, ref, { tool: input.name, args: input.args, result: stored });
      return stored;
    });
    const hash = await connections.currentHash(input.server, isPerPerson(server) ? userId : undefined);
    // The workflow gets a stand-in for a large result: the record holds it whole, and a result over Temporal's
    // 2 MB limit would fail this activity's completion.
    return {
      result: resultForWorkflow(recorded) as JsonObject,
      ...(input.listHash && hash && hash !== input.listHash ? { toolsChanged: true } : {}),
    };
  }

  return { mcpListTools, mcpCallTool };
}

/**
 * What ends a call before the server answers: a Stop, a shutdown, the attempt's timeout. A run that ended under it
 * (an operator's terminate, a reset, a run timeout) does not: the server's effect happens all the same, so the
 * call goes on to its answer (within callTimeout) and is recorded, as the export then shows.
 */
function stopOrShutdown(context: Context): AbortSignal {
  const controller = new AbortController();
  const onCancel = () => {
    const details = context.cancellationDetails;
    if (!details?.notFound && !details?.reset) controller.abort(context.cancellationSignal.reason);
  };
  if (context.cancellationSignal.aborted) onCancel();
  else context.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  return controller.signal;
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
      if (resource.text !== undefined)
        files.push({
          type: 'resource',
          uri: resource.uri,
          ...(resource.mimeType ? { mimeType: resource.mimeType } : {}),
          text: resource.text,
        });
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
