// The docs stay true to the tree (issue 32): every Markdown file has one title (H1), every repository path it
// cites exists, and every relative link reaches a file. A move that forgets a doc fails here, not in a reader.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Paths a doc may name that a build or a run makes, not the repository. */
const MADE_AT_RUN_TIME = /^(web\/dist|\.data|test-results)(\/|$)/;
/** A cited path: it starts at one of the repository's top folders. */
const CITED = /(?<![\w.\/@<>-])((?:src|stack|bin|test|web|db|docs|drill|bench|prompts|deploy|\.ci)\/[\w.\/…*<>{}-]*[\w…*>}])/g;

const docs = fs
  .globSync('**/*.md', { cwd: ROOT, exclude: (name) => ['node_modules', '.git', '.data', 'test-results', 'dist'].includes(path.basename(name)) })
  .sort();

/** The doc's lines outside fenced code blocks (where `# ` is a shell comment, not a title). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

test('the docs are found', () => {
  for (const doc of ['README.md', 'docs/architecture.md', 'docs/testing.md', 'docs/operations.md']) assert.ok(docs.includes(doc), doc);
});

test('every doc has exactly one title', () => {
  const wrong = docs
    .map((doc) => ({ doc, titles: prose(fs.readFileSync(path.join(ROOT, doc), 'utf8')).filter((line) => /^# /.test(line)) }))
    .filter(({ titles }) => titles.length !== 1);
  assert.deepEqual(wrong, []);
});

test('no doc has a section twice', () => {
  const twice: string[] = [];
  for (const doc of docs) {
    const seen = new Set<string>();
    for (const heading of prose(fs.readFileSync(path.join(ROOT, doc), 'utf8')).filter((line) => /^#{1,6} /.test(line))) {
      const key = heading.replace(/^#+\s*/, '').toLowerCase();
      if (seen.has(key)) twice.push(`${doc}: ${heading}`);
      seen.add(key);
    }
  }
  assert.deepEqual(twice, []);
});

test('every repository path a doc cites exists', () => {
  const missing: string[] = [];
  for (const doc of docs) {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    for (const [, cited] of text.matchAll(CITED)) {
      const file = cited!.replace(/\.$/, '');
      if (MADE_AT_RUN_TIME.test(file) || /[*…<{]/.test(file)) continue;
      if (!fs.existsSync(path.join(ROOT, file))) missing.push(`${doc}: ${file}`);
    }
  }
  assert.deepEqual([...new Set(missing)], []);
});

test('every relative link of a doc reaches a file', () => {
  const broken: string[] = [];
  for (const doc of docs) {
    for (const [, link] of fs.readFileSync(path.join(ROOT, doc), 'utf8').matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link!) || link!.startsWith('/')) continue;
      const target = path.join(ROOT, path.dirname(doc), decodeURIComponent(link!));
      if (!fs.existsSync(target)) broken.push(`${doc}: ${link}`);
    }
  }
  assert.deepEqual(broken, []);
});
