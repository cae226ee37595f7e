// Links on the page only from tools that declare sources (issue 29, finding 4): a tool result is hostile input,
// and an MCP server's `sources` would otherwise become links in the web client (phishing). What the web client
// decides per source (web/src/sourceLink.ts, used by ResultExtras), and what GET /v1/meta tells it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceLink } from '../../web/src/sourceLink.ts';
import { AGENT_SPECS } from '../../src/agents/registry.ts';

test('only an https: source of a tool that declares sources is a link, and its host is always in view', () => {
  assert.deepEqual(sourceLink('https://brewery.example/about', true), { href: 'https://brewery.example/about', host: 'brewery.example' });
  // the same address from a tool that declares no sources (an MCP server's result): text with its host
  assert.deepEqual(sourceLink('https://login.examp1e-bank.com/reset', false), { host: 'login.examp1e-bank.com' });
  for (const hostile of [
    'javascript:alert(document.cookie)',
    'data:text/html,<script>alert(1)</script>',
    'http://plain.example/',
    'file:///etc/passwd',
    'not a url',
  ]) {
    assert.equal(sourceLink(hostile, true).href, undefined, hostile);
  }
  // a host that hides behind a title is named: the host, not the title, says where a link goes
  assert.equal(sourceLink('https://user:pass@evil.example:8443/x', true).host, 'evil.example');
});

test('no tool declares sources unless its agent says so, and /v1/meta carries the flag for the web client', async () => {
  const { MetaBody } = await import('../../src/api/meta.ts');
  const tool = MetaBody.shape.agents.element.shape.tools.element;
  assert.ok('sources' in tool.shape);
  const declaring = Object.values(AGENT_SPECS).flatMap((spec) => spec.tools.filter((t) => t.sources).map((t) => t.name));
  assert.deepEqual(declaring, [], 'today no agent tool returns links; MCP tools never declare any');
});
