// The OpenAPI document is complete (issue 32): an operationId on every operation (explicit ones for the
// routes there are, made ones for routes added without), servers, and no schema that requires a property it
// does not declare. `npm run lint:openapi` runs Redocly on the same document; this checks it without Redocly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openApiDocument } from '../../src/api/openapi.ts';
import { derivedOperationId, withOperationIds } from '../../src/api/openapi-ids.ts';
import { registerAgentServer } from '../../src/agents/server-registry.ts';
import '../support/echo-agent/register.ts';
import { echoServer } from '../support/echo-agent/server.ts';

type Operation = { operationId?: string; security?: unknown[]; responses: Record<string, unknown> };
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operations(document: Record<string, unknown>): Array<{ method: string; path: string; operation: Operation }> {
  return Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ method, path, operation })),
  );
}

/** Every schema object in the document (components, parameters, bodies, responses, and all nested in them) that lists `required`. */
function requiredMismatches(node: unknown, at = '#'): string[] {
  if (Array.isArray(node)) return node.flatMap((item, index) => requiredMismatches(item, `${at}/${index}`));
  if (!node || typeof node !== 'object') return [];
  const object = node as Record<string, unknown>;
  const own = Array.isArray(object.required)
    ? (object.required as string[])
        .filter((name) => !Object.hasOwn((object.properties ?? {}) as object, name))
        .map((name) => `${at}: requires "${name}", not under properties`)
    : [];
  return [...own, ...Object.entries(object).flatMap(([key, value]) => requiredMismatches(value, `${at}/${key}`))];
}

test('every operation has an operationId, readable camelCase and unique', () => {
  const all = operations(openApiDocument());
  assert.ok(all.length >= 30, `only ${all.length} operations`);
  for (const { method, path, operation } of all) {
    assert.match(operation.operationId ?? '', /^[a-z][a-zA-Z0-9]*$/, `${method.toUpperCase()} ${path}`);
  }
  const ids = all.map(({ operation }) => operation.operationId);
  const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
  assert.deepEqual(repeated, [], 'operationIds used twice');
});

test('the existing operations have explicit, readable ids', () => {
  const byRoute = Object.fromEntries(
    operations(openApiDocument()).map(({ method, path, operation }) => [`${method.toUpperCase()} ${path}`, operation.operationId]),
  );
  const expected: Record<string, string> = {
    'GET /v1/conversations': 'listConversations',
    'POST /v1/conversations': 'createConversation',
    'GET /v1/conversations/{id}': 'getConversation',
    'PATCH /v1/conversations/{id}': 'renameConversation',
    'DELETE /v1/conversations/{id}': 'deleteConversation',
    'POST /v1/conversations/{id}/messages': 'sendMessage',
    'POST /v1/conversations/{id}/decisions': 'decide',
    'GET /v1/conversations/{id}/events': 'streamEvents',
    'POST /v1/conversations/{id}/stop': 'stopTurn',
    'GET /v1/conversations/{id}/export': 'exportConversation',
    'GET /v1/meta': 'getMeta',
    'POST /v1/api-keys': 'createApiKey',
    'DELETE /v1/me': 'eraseMyData',
    'POST /codec/decode': 'decodePayloads',
    'GET /v1/recipes': 'listRecipes',
    'GET /v1/bars': 'listBars',
    'POST /v1/conversations/{id}/steps/{stepId}/done': 'markStepDone',
  };
  for (const [route, id] of Object.entries(expected)) assert.equal(byRoute[route], id, route);
});

test('an operation without an operationId gets one made from its method and path; an explicit one wins', () => {
  assert.equal(derivedOperationId('patch', '/v1/conversations/{id}'), 'patchConversation');
  assert.equal(derivedOperationId('get', '/v1/conversations/{id}/export'), 'getConversationExport');
  assert.equal(derivedOperationId('get', '/v1/api-keys'), 'getApiKeys');
  assert.equal(derivedOperationId('post', '/v1/conversations/{id}/steps/{stepId}/done'), 'postConversationStepDone');
  assert.equal(derivedOperationId('get', '/openapi.json'), 'getOpenapiJson');

  const filled = withOperationIds({
    paths: {
      '/v1/things': { get: { responses: {} }, post: { operationId: 'makeThing', responses: {} } },
      '/v1/things/{id}': { patch: { responses: {} }, parameters: [] },
      // a made id that an explicit one already has is numbered
      '/v1/widgets': { get: { operationId: 'getThings', responses: {} } },
    },
  }) as unknown as { paths: Record<string, Record<string, Operation>> };
  assert.equal(filled.paths['/v1/things']!.post!.operationId, 'makeThing');
  assert.equal(filled.paths['/v1/things']!.get!.operationId, 'getThings2');
  assert.equal(filled.paths['/v1/things/{id}']!.patch!.operationId, 'patchThing');
  assert.deepEqual(filled.paths['/v1/things/{id}']!.parameters, [], 'a path item field is not an operation');
});

test('a route an agent adds without an operationId gets a made one in the document', () => {
  registerAgentServer({
    ...echoServer,
    openapi: {
      paths: ({ idParam, errors }) => ({
        '/v1/conversations/{id}/echoes': {
          get: { summary: 'no id given', parameters: [idParam], responses: { 200: { description: 'Echoes' }, ...errors(401) } },
          post: {
            operationId: 'addEcho',
            summary: 'an id given',
            parameters: [idParam],
            responses: { 200: { description: 'Echoed' }, ...errors(401) },
          },
        },
      }),
    },
  });
  const paths = openApiDocument().paths as Record<string, Record<string, Operation>>;
  assert.equal(paths['/v1/conversations/{id}/echoes']!.get!.operationId, 'getConversationEchoes');
  assert.equal(paths['/v1/conversations/{id}/echoes']!.post!.operationId, 'addEcho');
});

test('the document names its server: this one, or PUBLIC_URL when set', () => {
  assert.deepEqual(openApiDocument().servers, [{ url: '/', description: 'this server' }]);
  assert.deepEqual(openApiDocument({ publicUrl: 'https://brigade.example.org/' }).servers, [
    { url: 'https://brigade.example.org', description: 'this deployment (PUBLIC_URL)' },
  ]);
});

test('every property a schema requires is declared under its properties, nested schemas included', () => {
  const document = openApiDocument();
  assert.deepEqual(requiredMismatches(document), []);
  // the walk does find one: the check above is not vacuous
  assert.deepEqual(
    requiredMismatches({
      components: { schemas: { A: { type: 'object', properties: { b: { type: 'array', items: { required: ['c'] } } } } } },
    }),
    ['#/components/schemas/A/properties/b/items: requires "c", not under properties'],
  );
});

// operation-2xx-response and operation-4xx-response are off in redocly.yaml (redirects, probes); these say what holds instead.
test('every operation documents its success (2xx, or a 3xx redirect), and every one behind the bearer token its 401', () => {
  for (const { method, path, operation } of operations(openApiDocument())) {
    const codes = Object.keys(operation.responses);
    assert.ok(
      codes.some((code) => /^[23]\d\d$/.test(code)),
      `${method.toUpperCase()} ${path} answers ${codes.join(', ')}`,
    );
    const open = Array.isArray(operation.security) && operation.security.length === 0;
    if (!open) assert.ok(codes.includes('401'), `${method.toUpperCase()} ${path} documents no 401`);
  }
});
