// node bench/crypto-shredding.ts: what crypto-shredding (issue 42) costs. (1) The payload codec per payload,
// sealed under the deployment key (as before) and under a person's data key found from the workflow id (cached),
// encode and decode, and the data-key cache's hit rate over the run. (2) The erasure's table rewrite (VACUUM FULL of
// every table with a user_id column) at growing sizes: ms per table and in all. Embedded PostgreSQL as `npm start`
// runs it (fsync on), in a temp dir. Prints aligned text, then one JSON line. Settings (env, with defaults):
//   BENCH_PAYLOADS=20000          payloads per codec measurement
//   BENCH_REWRITE_ROWS=1000,10000,100000   messages (and as many events) in the database for each rewrite run
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import pg from 'pg';
import { BUILT_IN_AGENTS } from '../src/agents/catalog.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { rewritePersonTables } from '../src/db/table-rewrite.ts';
import { EncryptionCodec, StaticKeyProvider } from '../src/protection/payload-codec.ts';
import { PersonKeys } from '../src/protection/person-keys.ts';
import { startEmbeddedPostgres } from '../stack/embedded-postgres.ts';
import { freePort } from '../stack/ports.ts';

const PAYLOADS = Number(process.env.BENCH_PAYLOADS ?? 20_000);
const REWRITE_ROWS = (process.env.BENCH_REWRITE_ROWS ?? '1000,10000,100000').split(',').map(Number);

const tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-bench-shred-'));
await fs.chmod(tmpDir, 0o755);
const postgres = await startEmbeddedPostgres({ dataDir: path.join(tmpDir, 'pg'), port: await freePort(), database: 'brigade' });
const report: Record<string, unknown> = {};
try {
  await migrate(postgres.localUrl, { agents: BUILT_IN_AGENTS });
  const admin = new pg.Client({ connectionString: postgres.localUrl });
  await admin.connect();
  const pool = createPool(postgres.localUrl);

  // (1) the codec
  const keys = new StaticKeyProvider({ k1: randomBytes(32) }, 'k1');
  const conversation = randomUUID();
  const workflowId = `conversation-${conversation}`;
  await admin.query(`INSERT INTO conversations (id, user_id, agent, title, workflow_id) VALUES ($1, 'bench', 'support', 't', $2)`, [
    conversation,
    workflowId,
  ]);
  const personKeys = new PersonKeys(pool, keys);
  const codecs = { deployment: new EncryptionCodec(keys), person: new EncryptionCodec(keys, personKeys) };
  const context = { type: 'workflow' as const, namespace: 'default', workflowId };
  const codecRows: Record<string, unknown>[] = [];
  for (const size of [200, 4096]) {
    const payload: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: randomBytes(size) };
    for (const [name, codec] of Object.entries(codecs)) {
      await codec.encode([payload], context); // the key, made and cached once
      let started = performance.now();
      const sealed: Payload[] = [];
      for (let i = 0; i < PAYLOADS; i++) sealed.push(...(await codec.encode([payload], context)));
      const encodeUs = ((performance.now() - started) * 1000) / PAYLOADS;
      started = performance.now();
      for (const one of sealed) await codec.decode([one]);
      const decodeUs = ((performance.now() - started) * 1000) / PAYLOADS;
      codecRows.push({ key: name, bytes: size, encodeUs: round(encodeUs), decodeUs: round(decodeUs) });
    }
  }
  // what person keys add to each encode: the owner's key, from the caches
  let started = performance.now();
  for (let i = 0; i < PAYLOADS; i++) await personKeys.forWorkflow(workflowId, []);
  report.lookupUs = round(((performance.now() - started) * 1000) / PAYLOADS, 2);
  console.log(`person keys: the owner's key from the caches, ${report.lookupUs} µs per lookup`);
  const { hits, misses } = personKeys.stats();
  report.codec = codecRows;
  report.cacheHitRate = round(hits / (hits + misses), 5);
  console.log('codec, per payload (one at a time, key cached):');
  for (const row of codecRows)
    console.log(`  ${String(row.key).padEnd(10)} ${String(row.bytes).padStart(5)} B  encode ${row.encodeUs} µs  decode ${row.decodeUs} µs`);
  console.log(`  data-key cache: ${hits} hits, ${misses} misses (hit rate ${report.cacheHitRate})`);

  // (2) the table rewrite
  const rewrites: Record<string, unknown>[] = [];
  for (const rows of REWRITE_ROWS) {
    await admin.query('TRUNCATE conversations CASCADE');
    // 100 users, a conversation each, `rows` messages and events spread over them (~300 bytes of text each)
    await admin.query(`
      INSERT INTO conversations (id, user_id, agent, title, workflow_id)
      SELECT ('00000000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, 'user-' || u, 'support', 'title ' || u,
             'conversation-00000000-0000-4000-8000-' || lpad(u::text, 12, '0')
        FROM generate_series(1, 100) AS u`);
    await admin.query(
      `
      INSERT INTO messages (id, conversation_id, user_id, role, text)
      SELECT 'm' || i, ('00000000-0000-4000-8000-' || lpad((i % 100 + 1)::text, 12, '0'))::uuid, 'user-' || (i % 100 + 1), 'user', repeat(md5(i::text), 9)
        FROM generate_series(1, $1::integer) AS i`,
      [rows],
    );
    await admin.query(
      `
      INSERT INTO events (conversation_id, user_id, key, type, data)
      SELECT ('00000000-0000-4000-8000-' || lpad((i % 100 + 1)::text, 12, '0'))::uuid, 'user-' || (i % 100 + 1), 'e' || i, 'message',
             jsonb_build_object('text', repeat(md5(i::text), 9))
        FROM generate_series(1, $1::integer) AS i`,
      [rows],
    );
    await admin.query("DELETE FROM conversations WHERE user_id = 'user-1'");
    const [{ size }] = (
      await admin.query("SELECT pg_size_pretty(pg_total_relation_size('messages') + pg_total_relation_size('events')) AS size")
    ).rows;
    const started = performance.now();
    const tables = await rewritePersonTables(pool, (line) => console.log(line));
    const totalMs = performance.now() - started;
    const slowest = [...tables].sort((a, b) => b.ms - a.ms).slice(0, 3);
    rewrites.push({
      rows,
      size,
      tables: tables.length,
      totalMs: round(totalMs),
      slowest: slowest.map((t) => ({ table: t.table, ms: round(t.ms) })),
    });
    console.log(
      `rewrite, ${rows} messages + ${rows} events (${size}): ${tables.length} tables in ${round(totalMs)} ms; slowest ${slowest
        .map((t) => `${t.table} ${round(t.ms)} ms`)
        .join(', ')}`,
    );
  }
  report.rewrite = rewrites;
  await pool.end();
  await admin.end();
} finally {
  await postgres.stop();
  await fs.rm(tmpDir, { recursive: true, force: true });
}
console.log(JSON.stringify(report));

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
