import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { builtInCatalog } from '../../src/agents/catalog.ts';
import { ConfigError, loadConfig as loadRuntimeConfig } from '../../src/config.ts';

/** The settings as an entry point of the built-in agents reads them: the runtime's and the agents'. */
const loadConfig = (env: NodeJS.ProcessEnv) => loadRuntimeConfig(env, builtInCatalog());

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error;
  }
  assert.fail('expected loadConfig to throw');
}

describe('loadConfig', () => {
  test("an agent's settings are read with the catalog that lists it, and only then", () => {
    assert.equal(loadRuntimeConfig({}).OPENBREWERYDB_BASE_URL, undefined);
    assert.equal(loadConfig({}).OPENBREWERYDB_BASE_URL, 'https://api.openbrewerydb.org/v1');
  });

  test('with no settings, every default is in place and the embedded services are chosen', () => {
    const config = loadConfig({});
    assert.equal(config.PORT, 3000);
    assert.equal(config.HOST, '127.0.0.1');
    assert.equal(config.DATA_DIR, '.data');
    assert.equal(config.LOG_LEVEL, 'info');
    assert.equal(config.DATABASE_URL, undefined);
    assert.equal(config.EMBEDDED_PG_PORT, 5433);
    assert.equal(config.TEMPORAL_ADDRESS, undefined);
    assert.equal(config.TEMPORAL_NAMESPACE, 'default');
    assert.equal(config.TEMPORAL_TASK_QUEUE, 'brigade');
    assert.equal(config.TEMPORAL_DEV_PORT, 7233);
    assert.equal(config.TEMPORAL_UI_PORT, 8233);
    assert.equal(config.GEMINI_API_KEY, undefined);
    assert.equal(config.MODEL_TIMEOUT, 60_000);
    assert.equal(config.APPROVAL_TIMEOUT, 24 * 3600_000);
    // a run replays within its 4 s workflow task: it ends after 100 turns, not at the server's suggestion
    assert.equal(config.CONTINUE_AS_NEW_AFTER_TURNS, 100);
    assert.equal(config.API_TOKENS, undefined);
    assert.equal(config.OPENBREWERYDB_BASE_URL, 'https://api.openbrewerydb.org/v1');
  });

  test('values are parsed: numbers, durations, token JSON', () => {
    const config = loadConfig({
      PORT: '8080',
      MODEL_TIMEOUT: '30s',
      APPROVAL_TIMEOUT: '2h',
      DATABASE_URL: 'postgresql://u:p@db:5432/brigade',
      TEMPORAL_ADDRESS: 'temporal:7233',
      API_TOKENS: JSON.stringify({ 'a-token-of-sixteen-chars': { user: 'alice', roles: ['support'] } }),
    });
    assert.equal(config.PORT, 8080);
    assert.equal(config.MODEL_TIMEOUT, 30_000);
    assert.equal(config.APPROVAL_TIMEOUT, 7_200_000);
    assert.equal(config.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.deepEqual(config.API_TOKENS, { 'a-token-of-sixteen-chars': { user: 'alice', roles: ['support'] } });
  });

  test('an empty variable counts as unset', () => {
    const config = loadConfig({ PORT: '', DATABASE_URL: '', TEMPORAL_ADDRESS: '' });
    assert.equal(config.PORT, 3000);
    assert.equal(config.DATABASE_URL, undefined);
    assert.equal(config.TEMPORAL_ADDRESS, undefined);
  });

  test('every bad value is named in one message, not just the first', () => {
    const error = configError({
      PORT: 'eighty',
      EMBEDDED_PG_PORT: '70000',
      DATABASE_URL: 'mysql://x',
      TEMPORAL_ADDRESS: 'http://temporal:7233',
      LOG_LEVEL: 'loud',
      MODEL_TIMEOUT: 'soon',
      API_TOKENS: '{not json',
      OPENBREWERYDB_BASE_URL: 'not a url',
    });
    const lines = error.message.split('\n');
    assert.equal(lines[0], 'Invalid configuration:');
    for (const name of [
      'PORT',
      'EMBEDDED_PG_PORT',
      'DATABASE_URL',
      'TEMPORAL_ADDRESS',
      'LOG_LEVEL',
      'MODEL_TIMEOUT',
      'API_TOKENS',
      'OPENBREWERYDB_BASE_URL',
    ]) {
      assert.ok(
        lines.some((line) => line.trimStart().startsWith(`${name}:`)),
        `${name} should be named in:\n${error.message}`,
      );
    }
    assert.match(error.message, /PORT: must be a port number/);
    assert.match(error.message, /EMBEDDED_PG_PORT: must be between 1 and 65535/);
    assert.match(error.message, /DATABASE_URL: must be a postgres:\/\/ URL/);
    assert.match(error.message, /TEMPORAL_ADDRESS: must be host:port/);
    assert.match(error.message, /MODEL_TIMEOUT: must be a duration/);
    assert.match(error.message, /API_TOKENS: must be JSON/);
  });

  test('BEER_MIN_CLIENTS is at least 3, and a token client is normalized', () => {
    assert.match(configError({ BEER_MIN_CLIENTS: '2' }).message, /BEER_MIN_CLIENTS: must be 3 or more/);
    const config = loadConfig({
      BEER_MIN_CLIENTS: '5',
      API_TOKENS: JSON.stringify({ ['x'.repeat(20)]: { user: 'gus', client: ' clt-xlx836 ' } }),
    });
    assert.equal(config.BEER_MIN_CLIENTS, 5);
    assert.equal(config.API_TOKENS?.['x'.repeat(20)]?.client, 'CLT-XLX836');
  });

  test('a short token is refused, naming API_TOKENS', () => {
    const error = configError({ API_TOKENS: JSON.stringify({ short: { user: 'x' } }) });
    assert.match(error.message, /^\s+API_TOKENS\b/m);
  });

  test('a refused token is not echoed back and the reason is given', () => {
    const error = configError({ API_TOKENS: JSON.stringify({ 'short-secret': { user: 'x' } }) });
    assert.doesNotMatch(error.message, /short-secret/);
    assert.match(error.message, /API_TOKENS: token #1 is shorter than 16 characters/);
  });
});
