// The client command the MCP conformance suite runs for a client scenario (test/mcp/conformance.test.ts):
//
//   npx conformance client --command "node test/support/conformance-driver.ts" --scenario <name>
//
// The suite starts the scenario's MCP server and runs this with the server's URL as the last argument (and
// MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT in the environment). What it tests is Brigade's own MCP
// client (src/mcp/connections.ts inside a real worker, src/activities/mcp.ts), so this starts a whole Brigade on
// the test run's Temporal and PostgreSQL (startTestApp reads the BRIGADE_TEST_* variables the test process
// inherited from global-setup.ts) with the server in its BRIGADE_MCP_CONFIG, and has a support conversation call
// every tool the server offers: the scripted model calls each one, approvals are approved and the server's
// questions accepted with `{}`, so the client's defaults apply. It exits 0 once the turn has ended; the suite
// then judges what its server saw.
//
// The `auth/*` scenarios put the server behind MCP authorization (`auth: "oauth"`): between opening the
// conversation and the message, the person connects the server as the web client's "Connect" does, following the
// authorization URL Brigade gives (the suite's authorization server answers it with a redirect to Brigade's callback
// at once, no consent page) and handing the code and state to GET /v1/mcp/oauth/callback with the person's own
// credentials, as the web client does. A tool result asking to connect again (a step-up's scope) is answered the
// same way, at most MAX_CONNECTS times. MCP_CONFORMANCE_CONTEXT carries the client credentials of the scenarios
// that pre-register a client or use the client-credentials grant, which go into the config as an operator would.
// The cross-app scenario (SEP-990) gives an identity provider and an ID token it issued for the person: the IdP and
// the client go into the config (`grant: "cross_app"`), and the ID token is kept for the person as their OIDC sign-in
// keeps it (TokenVault.saveIdToken, sealed), since the scenario has no sign-in page to go through; there is no Connect.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type FakeCall, type RecordedRequest, endsWithToolResults, reply, startFakeGemini } from './fake-gemini.ts';
import { waitUntilIdle } from './scenarios.ts';
import { type TestApp, startTestApp } from './test-app.ts';
import { TokenVault } from '../../src/mcp/token-vault.ts';

/** the server's name in BRIGADE_MCP_CONFIG: the model sees its tools as `conformance__<tool>` */
const CONFORMANCE_SERVER = 'conformance';
/** the driver gives up (and says where it was) before the suite's own --timeout kills it */
const DEADLINE_MS = Number(process.env.CONFORMANCE_DRIVER_DEADLINE_MS ?? 50_000);

/** how many times one scenario's person connects (the first time, then each step-up), as a person would give up */
const MAX_CONNECTS = 3;

const serverUrl = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '(no scenario)';
let stage = 'starting';
const say = (line: string) => process.stdout.write(`[conformance-driver ${scenario}] ${line}\n`);

/** A value of the declared JSON Schema type, so a tool's required arguments are there and of their type. */
function sampleValue(schema: Record<string, any> | undefined, index: number): unknown {
  if (!schema) return `value-${index}`;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case 'number':
    case 'integer':
      return index + 2;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return sampleArgs(schema);
    default:
      return `value-${index}`;
  }
}

/** Arguments for a tool from its declared parameters: every required property, and no other. */
function sampleArgs(schema: Record<string, any> | undefined): Record<string, unknown> {
  const required: string[] = Array.isArray(schema?.required) ? schema.required : [];
  return Object.fromEntries(required.map((name, index) => [name, sampleValue(schema?.properties?.[name], index)]));
}

/** The model: call every tool of the conformance server at once, then end the turn in words. */
function scriptedModel(request: RecordedRequest) {
  if (endsWithToolResults(request)) return reply.text('The conformance server answered.');
  const declarations = (request.body.tools ?? []).flatMap((tools) => tools.functionDeclarations ?? []);
  const calls: FakeCall[] = declarations
    .filter((declaration) => declaration.name.startsWith(`${CONFORMANCE_SERVER}__`))
    .map((declaration) => ({ name: declaration.name, args: sampleArgs(declaration.parametersJsonSchema ?? declaration.parameters) }));
  say(`the model calls: ${calls.map((call) => `${call.name} ${JSON.stringify(call.args)}`).join(', ') || 'nothing (no tools)'}`);
  return calls.length > 0 ? reply.calls(...calls) : reply.text('The conformance server has no tools.');
}

const context: Record<string, string> = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const isAuth = scenario.startsWith('auth/');
const clientCredentials = /^auth\/client-credentials-/.test(scenario);
const crossApp = scenario === 'auth/cross-app-access-complete-flow';

/** The server's entry in BRIGADE_MCP_CONFIG: behind OAuth for the auth scenarios, with what their context gives. */
function serverConfig(): Record<string, unknown> {
  if (!isAuth) return { url: serverUrl, agents: ['support'] };
  if (crossApp) {
    const idp = { tokenEndpoint: context.idp_token_endpoint, clientId: context.idp_client_id };
    const oauth = { grant: 'cross_app', clientId: context.client_id, clientSecret: '${CONFORMANCE_CLIENT_SECRET}', idp };
    return { url: serverUrl, agents: ['support'], auth: 'oauth', oauth };
  }
  const oauth: Record<string, string> = {
    // the client ID metadata document the suite's authorization servers accept (basic-cimd)
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  };
  if (clientCredentials) oauth.grant = 'client_credentials';
  if (context.client_id) oauth.clientId = context.client_id;
  if (context.client_secret) oauth.clientSecret = '${CONFORMANCE_CLIENT_SECRET}';
  if (context.private_key_pem) {
    oauth.privateKey = '${CONFORMANCE_PRIVATE_KEY}';
    oauth.signingAlgorithm = context.signing_algorithm ?? 'ES256';
  }
  return { url: serverUrl, agents: ['support'], auth: 'oauth', oauth };
}

/** Connect, as the web client does: the authorization URL, followed to Brigade's callback, which the person calls. */
async function connect(app: TestApp): Promise<boolean> {
  stage = 'connecting the server';
  const started = await app.call('POST', `/v1/mcp/servers/${CONFORMANCE_SERVER}/connect`);
  if (started.status !== 200) {
    say(`Connect refused: ${started.status} ${started.body?.error ?? ''}`);
    return false;
  }
  stage = 'following the authorization URL';
  const consent = await fetch(started.body.authorizationUrl, { redirect: 'manual' });
  const location = consent.headers.get('location');
  if (!location) {
    say(`the authorization server answered ${consent.status} without a redirect`);
    return false;
  }
  const back = new URL(location, started.body.authorizationUrl);
  stage = 'calling the callback';
  const done = await app.call('GET', `/v1/mcp/oauth/callback?${back.searchParams.toString()}`);
  say(`Connect: ${done.status} ${JSON.stringify(done.body)}`);
  return done.status === 200;
}

async function drive(app: TestApp): Promise<void> {
  stage = 'opening a conversation';
  const created = await app.call('POST', '/v1/conversations', { body: { agent: 'support', title: `conformance ${scenario}` } });
  if (created.status !== 201) throw new Error(`POST /v1/conversations: ${created.status} ${JSON.stringify(created.body)}`);
  const id: string = created.body.id;

  let connects = 0;
  if (crossApp) {
    stage = 'keeping the sign-in ID token';
    // the person the driver acts as (test-app's default token, ALICE)
    await new TokenVault(app.pool, app.config).saveIdToken('alice', context.idp_id_token!);
  } else if (isAuth && !clientCredentials) {
    connects += 1;
    await connect(app);
  }
  for (let seen = 0; ;) {
    seen = await converse(app, id, seen);
    const view = await app.call('GET', `/v1/conversations/${id}`);
    const asked = (view.body.messages ?? []).slice(seen).some((message: any) => message.role === 'tool' && message.result?.connect);
    seen = view.body.messages?.length ?? 0;
    if (!asked || connects >= MAX_CONNECTS) break;
    connects += 1;
    if (!(await connect(app))) break;
  }
}

/** One message and its turn, decisions included; returns how many messages there were before it. */
async function converse(app: TestApp, id: string, since: number): Promise<number> {
  stage = 'sending the message';
  let turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'Use the conformance server.' } });
  // Each approval is approved and each question accepted with {} until nothing waits.
  for (let round = 0; turn.status === 200 && turn.body.pending?.length > 0; round++) {
    if (round >= 20) throw new Error('still waiting after 20 decisions');
    const item = turn.body.pending[0];
    const decision = item.kind === 'question' ? { decision: 'accept', args: {} } : { decision: 'approve' };
    stage = `deciding ${item.kind} ${item.tool ?? ''}`.trim();
    say(`${item.kind}${item.tool ? ` for ${item.tool}` : ''}: ${decision.decision}`);
    turn = await app.call('POST', `/v1/conversations/${id}/decisions`, { body: { pendingId: item.id, ...decision } });
  }
  if (turn.status !== 200) throw new Error(`${stage}: ${turn.status} ${JSON.stringify(turn.body)}`);

  stage = 'waiting for the turn to end';
  await waitUntilIdle(app, id, 20_000);
  const view = await app.call('GET', `/v1/conversations/${id}`);
  for (const message of (view.body.messages ?? []).slice(since)) {
    if (message.role === 'tool') say(`tool ${message.tool}: ${JSON.stringify(message.result).slice(0, 300)}`);
  }
  say(`the turn ended: ${JSON.stringify(view.body.messages?.at(-1)?.text ?? '')}`);
  return since;
}

async function main(): Promise<number> {
  if (!serverUrl) {
    console.error('usage: node test/support/conformance-driver.ts <MCP server URL> (run by the conformance suite)');
    return 2;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brigade-conformance-'));
  const configPath = path.join(dir, 'mcp.json');
  fs.writeFileSync(configPath, JSON.stringify({ mcpServers: { [CONFORMANCE_SERVER]: serverConfig() } }));
  // the secrets the config names, as an operator's environment holds them
  if (context.client_secret) process.env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
  if (context.private_key_pem) process.env.CONFORMANCE_PRIVATE_KEY = context.private_key_pem;
  const fake = await startFakeGemini();
  fake.scriptFn(scriptedModel);
  let app: TestApp | undefined;
  try {
    stage = 'starting Brigade';
    app = await startTestApp({
      env: {
        GEMINI_API_KEY: 'conformance-key',
        GEMINI_BASE_URL: fake.baseUrl,
        MODEL_TIMEOUT: '10s',
        BRIGADE_MCP_CONFIG: configPath,
        DATA_DIR: path.join(dir, 'data'),
        // tokens are sealed under the person's key, so the auth scenarios run with payload encryption on
        ...(isAuth ? { PAYLOAD_ENCRYPTION_KEYS: JSON.stringify({ k1: randomBytes(32).toString('base64') }) } : {}),
      },
    });
    await drive(app);
    return 0;
  } finally {
    stage = 'stopping Brigade';
    await app?.stop();
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const deadline = setTimeout(() => {
  console.error(`[conformance-driver ${scenario}] gave up after ${DEADLINE_MS} ms while ${stage}`);
  process.exit(3);
}, DEADLINE_MS);
deadline.unref();

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[conformance-driver ${scenario}] failed while ${stage}: ${(error as Error)?.stack ?? error}`);
    process.exit(1);
  },
);
