// The web client's agent homes stay homes: generic code (web/src outside agents/) reaches an agent only
// through agents/registry.ts and never names one, no agent's folder imports another's (or the registry, which
// would be a cycle), and web/src has no import cycle. Read from the sources, so no browser or build is needed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { agentNames } from '../../src/agents/registry.ts';

const AGENTS = agentNames();

const SRC = path.resolve(import.meta.dirname, '../../web/src');
const AGENTS_DIR = path.join(SRC, 'agents');
const REGISTRY = path.join(AGENTS_DIR, 'registry.ts');
// approval is the one generic kind: any agent's tool may ask for one
const AGENT_KINDS = ['confirmation', 'patchset'];

const rel = (file: string) => path.relative(SRC, file);
const isAgentFile = (file: string) => file.startsWith(AGENTS_DIR + path.sep);
const agentOf = (file: string) => (isAgentFile(file) && file !== REGISTRY ? rel(file).split(path.sep)[1] : undefined);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** Relative imports (static, type-only, re-exports and dynamic), resolved the way Vite does. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
  return specifiers.flatMap((spec) => {
    const base = path.resolve(path.dirname(file), spec);
    const found = [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')].find(
      (f) => fs.existsSync(f) && fs.statSync(f).isFile(),
    );
    assert.ok(found, `${rel(file)} imports ${spec}, which is not a file`);
    // what is outside web/src (the server's wire types) or not code (styles) is not part of the graph
    return found.startsWith(SRC + path.sep) && /\.tsx?$/.test(found) ? [found] : [];
  });
}

const files = sources(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

test('every agent the API knows has a home folder with an index', () => {
  for (const agent of AGENTS) {
    assert.ok(
      fs.existsSync(path.join(AGENTS_DIR, agent, 'index.ts')) || fs.existsSync(path.join(AGENTS_DIR, agent, 'index.tsx')),
      `web/src/agents/${agent}/index.ts`,
    );
  }
});

test('generic web code imports agent modules only through the registry', () => {
  const wrong = [...graph].flatMap(([file, deps]) =>
    isAgentFile(file) ? [] : deps.filter((dep) => isAgentFile(dep) && dep !== REGISTRY).map((dep) => `${rel(file)} -> ${rel(dep)}`),
  );
  assert.deepEqual(wrong, []);
});

test("an agent's home imports no other agent's home and not the registry", () => {
  const wrong = [...graph].flatMap(([file, deps]) => {
    const agent = agentOf(file);
    if (!agent) return [];
    return deps
      .filter((dep) => dep === REGISTRY || (agentOf(dep) !== undefined && agentOf(dep) !== agent))
      .map((dep) => `${rel(file)} -> ${rel(dep)}`);
  });
  assert.deepEqual(wrong, []);
});

test('generic web code names no agent and no agent-owned pending kind as a string', () => {
  const names = new RegExp(`(['"\`])(${[...AGENTS, ...AGENT_KINDS].join('|')})\\1`);
  const wrong = files
    .filter((file) => !isAgentFile(file))
    .flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => [line, i + 1] as const)
        .filter(([line]) => names.test(line))
        .map(([line, n]) => `${rel(file)}:${n}: ${line.trim()}`),
    );
  assert.deepEqual(wrong, []);
});

test('web/src has no import cycle', () => {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(file)), file].map(rel).join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const dep of graph.get(file) ?? []) visit(dep, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  assert.deepEqual(cycles, []);
});
