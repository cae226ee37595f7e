// docker-compose.yml and `npm run cluster` give the worker and the API the same environment: the shared values
// from deploy/brigade.env (compose reads it with env_file), and the same names for what each topology sets itself.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { PASSED_THROUGH_VARIABLES, TOPOLOGY_VARIABLES, processEnv, sharedEnv, type ClusterRole } from '../../stack/cluster-env.ts';

const compose = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');

/** The lines of the block that starts at `header` (a line matching it), up to the next line indented as much or less. */
function block(text: string, header: RegExp, from = 0): { lines: string[]; end: number } {
  const lines = text.split('\n');
  const start = lines.findIndex((line, index) => index >= from && header.test(line));
  assert.ok(start >= 0, `docker-compose.yml has no line matching ${header}`);
  const indent = lines[start]!.search(/\S/);
  const body: string[] = [];
  let index = start + 1;
  for (; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    if (line.search(/\S/) <= indent) break;
    body.push(line);
  }
  return { lines: body, end: index };
}

/** The keys directly inside a block (one level deeper than its header). */
function keys(lines: string[]): string[] {
  const indent = Math.min(...lines.map((line) => line.search(/\S/)));
  return lines.filter((line) => line.search(/\S/) === indent).map((line) => line.trim().split(':')[0]!);
}

/** What compose gives a service: env_file's values and the names of its `environment`, with the anchor merged. */
function composeEnv(service: ClusterRole): { envFiles: string[]; names: Set<string> } {
  const shared = block(compose, /^x-brigade: &brigade$/);
  const envFiles = shared.lines.filter((line) => /^\s+env_file:/.test(line)).map((line) => line.split(':')[1]!.trim());
  const base = keys(block(shared.lines.join('\n'), /^\s+environment: &brigade-env$/).lines);
  const lines = compose.split('\n');
  const at = lines.findIndex((line) => line === `  ${service}:`);
  assert.ok(at >= 0, `docker-compose.yml has no service ${service}`);
  const serviceBlock = block(compose, new RegExp(`^  ${service}:$`), at);
  const own = serviceBlock.lines.some((line) => /^    environment:/.test(line))
    ? keys(block(serviceBlock.lines.join('\n'), /^    environment:/).lines)
    : ['<<'];
  assert.ok(
    serviceBlock.lines.some((line) => /<<: \*brigade$/.test(line)),
    `${service} extends x-brigade`,
  );
  const names = new Set(own.flatMap((key) => (key === '<<' ? base : [key])));
  return { envFiles, names };
}

test('docker-compose.yml reads deploy/brigade.env, the file the cluster reads', () => {
  for (const service of ['worker', 'api'] as const) {
    assert.deepEqual(composeEnv(service).envFiles, ['deploy/brigade.env']);
  }
  assert.ok(Object.keys(sharedEnv()).length > 0);
});

test('the worker and the API get the same variables in docker-compose.yml and in the cluster', () => {
  const shared = Object.keys(sharedEnv());
  for (const role of ['worker', 'api'] as const) {
    const fromCompose = composeEnv(role).names;
    for (const name of shared)
      assert.ok(!fromCompose.has(name), `${role}: ${name} is in deploy/brigade.env; compose must not set it again`);
    const expected = new Set([...TOPOLOGY_VARIABLES[role], ...PASSED_THROUGH_VARIABLES[role]]);
    assert.deepEqual(
      [...fromCompose].sort(),
      [...expected].sort(),
      `${role}: compose's own variables are the topology's and the passed-through ones`,
    );

    const topology = Object.fromEntries(TOPOLOGY_VARIABLES[role].map((name) => [name, `value-of-${name}`]));
    const secrets = Object.fromEntries(PASSED_THROUGH_VARIABLES[role].map((name) => [name, `secret-${name}`]));
    const env = processEnv(role, topology, { from: secrets });
    assert.deepEqual(Object.keys(env).sort(), [...new Set([...shared, ...expected])].sort(), `${role}: the cluster sets the same names`);
    for (const [name, value] of Object.entries(sharedEnv())) assert.equal(env[name], value, `${role}: ${name} comes from the file`);
  }
});

test('what the image provides to both (the prebuilt workflow bundle), the cluster provides too', () => {
  assert.match(dockerfile, /^ENV WORKFLOW_BUNDLE_PATH=/m);
});

test('a topology value the cluster forgets is an error, not a silently missing variable', () => {
  assert.throws(() => processEnv('api', { DATABASE_URL: 'postgres://x', TEMPORAL_ADDRESS: 'a:1' }), /HOST, PORT, TEMPORAL_UI_URL/);
});
