// Issue 34's settings: an issuer needs an audience (or it would take any token the provider signs, for any
// application), and no API_TOKENS user may take a name in the namespace of a provider's people.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';

test('AUTH_OIDC_ISSUER without AUTH_OIDC_AUDIENCE, or a client id without an issuer, stops the start', () => {
  assert.throws(() => loadConfig({ AUTH_OIDC_ISSUER: 'https://login.example.com/' }), /AUTH_OIDC_AUDIENCE: required with AUTH_OIDC_ISSUER/);
  assert.throws(() => loadConfig({ AUTH_OIDC_CLIENT_ID: 'web' }), /AUTH_OIDC_ISSUER: required/);
  const config = loadConfig({
    AUTH_OIDC_ISSUER: 'https://login.example.com/',
    AUTH_OIDC_AUDIENCE: 'https://api.example.com',
    AUTH_OIDC_CLOCK_SKEW: '10s',
  });
  assert.equal(config.AUTH_OIDC_ROLES_CLAIM, 'roles');
  assert.equal(config.AUTH_OIDC_CLOCK_SKEW, 10_000);
  assert.equal(config.AUTH_API_KEY_OWNER_UNSEEN, 30 * 86_400_000);
});

test('an API_TOKENS user named oidc:… is refused, without printing the token', () => {
  const token = 'token-that-is-long-enough-0000';
  assert.throws(
    () => loadConfig({ API_TOKENS: JSON.stringify({ [token]: { user: 'oidc:abc', roles: [] } }) }),
    (error: Error) => /may not start with "oidc:"/.test(error.message) && !error.message.includes(token),
  );
});
