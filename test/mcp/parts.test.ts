// The pure parts of MCP support: the config file's checks (each names its field), tool names, schema
// conversion for Gemini, policies from annotations and overrides, and ajv-backed argument checks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { McpConfigError, isCrossApp, isPerPerson, parseMcpConfig, withEnv } from '../../src/mcp/config.ts';
import { jsonSchemaArgs } from '../../src/shared/json-schema.ts';
import { MAX_NAME, exposedName } from '../../src/mcp/names.ts';
import { policyFor } from '../../src/mcp/policy.ts';
import { questionAnswer, questionSpec } from '../../src/shared/mcp-question-kind.ts';
import { refusalMessage } from '../../src/shared/refusal.ts';
import { toGeminiSchema } from '../../src/mcp/schema.ts';
import { describeIssues } from '../../src/shared/tool-spec.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';

const config = (servers: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
  parseMcpConfig(JSON.stringify({ mcpServers: servers }), builtInCatalog(), env);
const refused = (servers: Record<string, unknown>, pattern: RegExp, env: NodeJS.ProcessEnv = {}) =>
  assert.throws(
    () => config(servers, env),
    (error: Error) => error instanceof McpConfigError && pattern.test(error.message),
  );

describe('BRIGADE_MCP_CONFIG', () => {
  test('stdio and HTTP servers, with defaults', () => {
    const [stdio, http] = config(
      {
        pantry: { command: 'node', args: ['server.js'], agents: ['recipes'] },
        kitchen: {
          url: 'https://kitchen.example/mcp',
          headers: { Authorization: 'Bearer ${TOKEN}' },
          agents: ['recipes', 'support'],
          approval: 'always',
        },
      },
      { TOKEN: 't' },
    );
    assert.equal(stdio!.transport, 'stdio');
    assert.equal(stdio!.approval, 'unless-read-only');
    assert.equal(stdio!.questionDeadline, 600_000);
    assert.equal(http!.transport, 'http');
    assert.equal(http!.approval, 'always');
    assert.deepEqual(withEnv({ Authorization: 'Bearer ${TOKEN}' }, { TOKEN: 'secret' }), { Authorization: 'Bearer secret' });
  });

  test('a bad file names the field', () => {
    assert.throws(() => parseMcpConfig('{', builtInCatalog()), /not JSON/);
    refused({ pantry: { agents: ['recipes'] } }, /mcpServers\.pantry: needs "command"/);
    refused({ pantry: { command: 'x', agents: ['nobody'] } }, /mcpServers\.pantry\.agents\.0/);
    refused({ pantry: { command: 'x', agents: ['recipes'], approval: 'sometimes' } }, /mcpServers\.pantry\.approval/);
    refused(
      { pantry: { command: 'x', agents: ['recipes'], tools: { t: { deadline: 'soon' } } } },
      /mcpServers\.pantry\.tools\.t\.deadline/,
    );
    refused(
      { pantry: { command: 'x', agents: ['recipes'], tools: { t: { timeoutAction: 'explode' } } } },
      /mcpServers\.pantry\.tools\.t\.timeoutAction/,
    );
    refused({ kitchen: { url: 'ftp://x', agents: ['recipes'] } }, /mcpServers\.kitchen\.url/);
    refused({ kitchen: { url: 'http://x', agents: ['recipes'], colour: 'red' } }, /mcpServers\.kitchen.*colour/);
    refused({ 'bad name': { command: 'x', agents: ['recipes'] } }, /mcpServers\.bad name/);
    refused(
      { kitchen: { url: 'http://x', agents: ['recipes'], headers: { Authorization: 'Bearer ${MISSING}' } } },
      /headers\.Authorization: environment variable MISSING is not set/,
    );
  });

  test('a server behind OAuth: per person by default, a service identity with client credentials; bad settings name the field', () => {
    const [tracker, catalog] = config(
      {
        tracker: { url: 'https://tracker.example/mcp', auth: 'oauth', agents: ['support'] },
        catalog: {
          url: 'https://catalog.example/mcp',
          auth: 'oauth',
          agents: ['recipes'],
          oauth: { grant: 'client_credentials', clientId: 'brigade', clientSecret: '${CATALOG_SECRET}' },
        },
      },
      { CATALOG_SECRET: 's' },
    );
    assert.equal(isPerPerson(tracker!), true);
    assert.equal(isPerPerson(catalog!), false);
    refused({ t: { url: 'http://x', agents: ['support'], auth: 'basic' } }, /mcpServers\.t\.auth/);
    refused({ t: { url: 'http://x', agents: ['support'], oauth: { clientId: 'c' } } }, /mcpServers\.t\.oauth: needs "auth": "oauth"/);
    refused(
      { t: { url: 'http://x', agents: ['support'], auth: 'oauth', oauth: { grant: 'client_credentials', clientId: 'c' } } },
      /mcpServers\.t\.oauth: client_credentials needs clientId and clientSecret or privateKey/,
    );
    refused(
      { t: { url: 'http://x', agents: ['support'], auth: 'oauth', oauth: { clientId: 'c', clientSecret: '${NOPE}' } } },
      /mcpServers\.t\.oauth\.clientSecret: environment variable NOPE is not set/,
    );
    refused(
      { t: { url: 'http://x', agents: ['support'], auth: 'oauth', oauth: { clientMetadataUrl: 'http://x/client.json' } } },
      /mcpServers\.t\.oauth\.clientMetadataUrl: must be an https URL/,
    );
    refused({ t: { command: 'x', agents: ['support'], auth: 'oauth' } }, /mcpServers\.t.*auth/);
  });

  test('a cross-app server (SEP-990): per person, never connected; it needs its identity provider and client, whose secrets must resolve', () => {
    const idp = { tokenEndpoint: 'https://idp.example/token', clientId: 'brigade-at-idp', clientSecret: '${IDP_SECRET}' };
    const oauth = { grant: 'cross_app', clientId: 'brigade', clientSecret: '${WIKI_SECRET}', idp };
    const [wiki, tracker] = config(
      {
        wiki: { url: 'https://wiki.example/mcp', auth: 'oauth', agents: ['support'], oauth },
        tracker: { url: 'https://tracker.example/mcp', auth: 'oauth', agents: ['support'] },
      },
      { IDP_SECRET: 'i', WIKI_SECRET: 'w' },
    );
    assert.equal(isPerPerson(wiki!), true);
    assert.equal(isCrossApp(wiki!), true);
    assert.equal(isCrossApp(tracker!), false);
    const server = (oauth: unknown) => ({ t: { url: 'http://x', agents: ['support'], auth: 'oauth', oauth } });
    refused(
      server({ grant: 'cross_app', clientId: 'c', clientSecret: 's' }),
      /mcpServers\.t\.oauth: cross_app needs idp, clientId and clientSecret/,
    );
    refused(server({ grant: 'cross_app', idp, clientId: 'c' }), /mcpServers\.t\.oauth: cross_app needs idp, clientId and clientSecret/);
    refused(server({ clientId: 'c', idp }), /mcpServers\.t\.oauth: idp is only for "grant": "cross_app"/);
    refused(
      server({ ...oauth, idp: { ...idp, tokenEndpoint: 'ftp://idp' } }),
      /mcpServers\.t\.oauth\.idp\.tokenEndpoint: must be an http\(s\) URL/,
    );
    refused(
      server({ ...oauth, clientSecret: 's', idp: { ...idp, clientSecret: '${NOPE}' } }),
      /mcpServers\.t\.oauth\.idp\.clientSecret: environment variable NOPE is not set/,
    );
  });

  test('an error names the variable, never its value', () => {
    try {
      config({ kitchen: { url: 'http://x', agents: [], headers: { Authorization: 'Bearer ${TOKEN}' } } }, { TOKEN: 'top-secret' });
      assert.fail('refused');
    } catch (error) {
      assert.ok(!(error as Error).message.includes('top-secret'));
    }
  });
});

describe('tool names', () => {
  test('<server>__<tool>, valid for Gemini, shortened with a stable hash', () => {
    assert.equal(exposedName('kitchen', 'order_groceries'), 'kitchen__order_groceries');
    const long = exposedName('kitchen', 'x'.repeat(100));
    assert.equal(long.length, MAX_NAME);
    assert.equal(long, exposedName('kitchen', 'x'.repeat(100)), 'stable');
    assert.notEqual(long, exposedName('kitchen', 'x'.repeat(101)), 'distinct');
    const odd = exposedName('kitchen', 'get weather/now');
    assert.match(odd, /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/);
    assert.notEqual(odd, exposedName('kitchen', 'get_weather_now'), 'a replaced character keeps the names apart');
  });
});

describe('schemas', () => {
  test('what Gemini accepts: dialect and unknown keywords dropped, const and type lists rewritten', () => {
    const converted = toGeminiSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        unit: { const: 'g' },
        amount: { type: ['number', 'null'], default: 1, examples: [2] },
        tags: { type: 'array', items: { type: 'string', pattern: '^a' } },
        pick: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      },
      required: ['unit'],
      additionalProperties: false,
      'x-vendor': true,
    });
    assert.deepEqual(converted, {
      type: 'object',
      properties: {
        unit: { enum: ['g'] },
        amount: { anyOf: [{ type: 'number' }, { type: 'null' }] },
        tags: { type: 'array', items: { type: 'string' } },
        pick: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      },
      required: ['unit'],
      additionalProperties: false,
    });
    assert.deepEqual(toGeminiSchema(undefined), { type: 'object', properties: {} });
  });

  test('arguments checked against the whole schema, with messages that name the field', () => {
    const args = jsonSchemaArgs({
      type: 'object',
      properties: { item: { type: 'string', minLength: 1 }, quantity: { type: 'integer', maximum: 20 } },
      required: ['item'],
    });
    assert.ok(args.safeParse({ item: 'eggs', quantity: 2 }).success);
    const bad = args.safeParse({ quantity: 50 });
    assert.ok(!bad.success);
    const said = describeIssues(bad.error!);
    assert.match(said, /item: must have required property/);
    assert.match(said, /quantity: must be <= 20/);
  });
});

describe('policies', () => {
  const server = { approval: 'unless-read-only' as const, tools: {} };
  test('unless-read-only reads readOnlyHint; always and never; per-tool overrides', () => {
    assert.equal(policyFor(server, 'lookup', true).approval, false);
    assert.deepEqual(policyFor(server, 'order', false), { approval: true, decisions: ['approve', 'reject', 'edit'], onTimeout: 'reject' });
    assert.equal(policyFor({ ...server, approval: 'always' }, 'lookup', true).approval, true);
    assert.equal(policyFor({ ...server, approval: 'never' }, 'order', false).approval, false);
    assert.deepEqual(
      policyFor(
        { ...server, tools: { order: { deadline: 30_000, timeoutAction: 'approve', decisions: ['approve', 'reject'] } } },
        'order',
        false,
      ),
      {
        approval: true,
        decisions: ['approve', 'reject'],
        deadlineMs: 30_000,
        onTimeout: 'approve',
      },
    );
  });
});

describe('the question kind', () => {
  const item = {
    id: 'q1',
    kind: 'question' as const,
    tool: 'kitchen__confirm_delivery',
    callId: 'c1',
    args: {},
    decisions: ['accept' as const, 'decline' as const, 'cancel' as const],
    details: { server: 'kitchen', schema: { type: 'object', properties: { day: { enum: ['monday'] } }, required: ['day'] } },
  };
  test('an answer must fit the schema; a chat message declines', () => {
    assert.equal(questionSpec.check!(item, { pendingId: 'q1', decision: 'accept', args: { day: 'monday' } }), undefined);
    assert.match(refusalMessage(questionSpec.check!(item, { pendingId: 'q1', decision: 'accept', args: { day: 'friday' } })!), /day/);
    assert.match(refusalMessage(questionSpec.check!(item, { pendingId: 'q1', decision: 'accept' })!), /needs "args"/);
    assert.equal(questionSpec.check!(item, { pendingId: 'q1', decision: 'decline' }), undefined);
    assert.deepEqual(questionSpec.fromMessage(item, 'not now'), { pendingId: 'q1', decision: 'decline', reason: 'not now' });
  });

  const menu = {
    ...item,
    details: {
      server: 'kitchen',
      schema: {
        type: 'object',
        properties: {
          guests: { type: 'integer', minimum: 1, maximum: 12, default: 4 },
          vegetarian: { type: 'boolean', default: false },
          course: {
            type: 'string',
            oneOf: [
              { const: 'starter', title: 'Starter' },
              { const: 'main', title: 'Main course' },
            ],
            default: 'main',
          },
          allergies: { type: 'array', items: { type: 'string', enum: ['nuts', 'gluten', 'dairy'] }, maxItems: 2, default: ['nuts'] },
          contact: { type: 'string', format: 'email' },
          day: { type: 'string', format: 'date' },
        },
        required: ['guests', 'course'],
      },
    },
  };
  const accept = (args: Record<string, unknown>) => ({ pendingId: 'q1', decision: 'accept' as const, args });

  test("an accepted answer carries the schema's defaults for what it leaves out, and is checked with them", () => {
    assert.equal(questionSpec.check!(menu, accept({})), undefined, 'required fields with defaults are answered by their defaults');
    assert.deepEqual(questionAnswer(menu, accept({})), { guests: 4, vegetarian: false, course: 'main', allergies: ['nuts'] });
    assert.deepEqual(questionAnswer(menu, accept({ guests: 2, allergies: [] })), {
      guests: 2,
      vegetarian: false,
      course: 'main',
      allergies: [],
    });
  });

  test('a refusal names each field: bounds, titled enums, arrays of enums, the formats the spec allows', () => {
    const refusal = questionSpec.check!(
      menu,
      accept({ guests: 40, course: 'dessert', allergies: 'nuts', contact: 'nobody', day: '2025-02-30' }),
    );
    assert.ok(refusal && typeof refusal !== 'string', 'the refusal lists its fields');
    const fields = Object.fromEntries(refusal.fields.map((f) => [f.field, f.message]));
    assert.deepEqual(Object.keys(fields).sort(), ['allergies', 'contact', 'course', 'day', 'guests']);
    assert.match(fields.allergies!, /array/);
    assert.match(fields.contact!, /email/);
    assert.match(refusal.message, /guests: must be <= 12/);
    const tooMany = questionSpec.check!(menu, accept({ allergies: ['nuts', 'gluten', 'dairy'] }));
    assert.match(refusalMessage(tooMany!), /allergies: must NOT have more than 2 items/);
    assert.equal(questionSpec.check!(menu, accept({ contact: 'cook@example.com', day: '2024-02-29' })), undefined);
  });
});
