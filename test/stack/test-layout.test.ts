// Every test file is run by some npm script: tests sit in folders by layer and in each agent's home
// (docs/testing.md#where-the-tests-are), so a file left where no glob of package.json reaches (a flat
// test/x.test.ts, a new folder) would pass by never running. This names it instead.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The test files and globs a script hands to `node --test`. */
function testArguments(script: string): string[] {
  return [...script.matchAll(/'([^']+\.test\.ts)'|(?<=\s)([\w./-]+\.test\.ts)(?=\s|$)/g)].map((m) => (m[1] ?? m[2])!);
}

test('every *.test.ts is run by npm test, npm run test:e2e or npm run test:drills', () => {
  const run = new Set<string>();
  for (const name of ['test', 'test:e2e', 'test:drills']) {
    assert.ok(scripts[name], `package.json has no "${name}" script`);
    for (const pattern of testArguments(scripts[name]!)) for (const file of fs.globSync(pattern, { cwd: ROOT })) run.add(file);
  }
  const all = fs.globSync('**/*.test.ts', {
    cwd: ROOT,
    exclude: (name) => ['node_modules', '.git', '.data'].includes(path.basename(name)),
  });
  assert.ok(all.length > 80, `found ${all.length} test files`);
  assert.deepEqual(
    all.filter((file) => !run.has(file)),
    [],
  );
});
