// npm run bench:sql-guard: the SQL guard's time per query (parse + checks + rewrite + deparse, and the
// re-parse and re-check of what was deparsed) over the hostile corpus of test/support/sql-corpus.ts,
// with a bare parse as the floor. In process, no database: this is the guard's own cost per tool call.
import os from 'node:os';
import { parseSync } from 'libpg-query';
import { guardSqlSync, loadSqlParser } from '../src/sql/guard.ts';
import { RECIPES_SQL_POLICY } from '../src/agents/recipes/sql-policy.ts';
import { CORPUS } from '../test/support/sql-corpus.ts';
import { round, summarise } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const WARMUP_ROUNDS = 5;

await loadSqlParser();
const queries = CORPUS.map((entry) => entry.sql);

const micros = (start: bigint) => Number(process.hrtime.bigint() - start) / 1000;

// Wall time, and this process's CPU time for the same call: on a shared machine (a load average above the
// core count) a preempted call shows a long wall time but not a long CPU time.
function time(fn: (sql: string) => unknown): { all: number[]; allowed: number[]; refused: number[]; cpu: number[] } {
  const all: number[] = [];
  const allowed: number[] = [];
  const refused: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    for (const sql of queries) {
      const cpuStart = process.cpuUsage();
      const start = process.hrtime.bigint();
      const result = fn(sql) as { ok?: boolean } | undefined;
      const took = micros(start);
      const used = process.cpuUsage(cpuStart);
      if (round < WARMUP_ROUNDS) continue;
      all.push(took);
      cpu.push(used.user + used.system);
      (result?.ok ? allowed : refused).push(took);
    }
  }
  return { all, allowed, refused, cpu };
}

const show = (samples: number[]) => {
  const s = summarise(samples);
  return { count: s.count, p50_us: round(s.p50), p95_us: round(s.p95), p99_us: round(s.p99), max_us: round(s.max), mean_us: round(s.mean) };
};

const guard = time((sql) => guardSqlSync(sql, RECIPES_SQL_POLICY));
const parseOnly = time((sql) => {
  try {
    parseSync(sql);
    return { ok: true };
  } catch {
    return { ok: false };
  }
});

const report = {
  corpus: queries.length,
  rounds: ROUNDS,
  machine: { cores: os.cpus().length, loadAverage1m: round(os.loadavg()[0]!, 2) },
  guard: { all: show(guard.all), allowed: show(guard.allowed), refused: show(guard.refused), cpu: show(guard.cpu) },
  parseOnly: show(parseOnly.all),
};
console.log(JSON.stringify(report, null, 2));
const g = report.guard.all;
console.log(
  `\nSQL guard over ${queries.length} corpus queries x ${ROUNDS} rounds: p50 ${g.p50_us} µs, p99 ${g.p99_us} µs ` +
    `(allowed p50 ${report.guard.allowed.p50_us} µs / p99 ${report.guard.allowed.p99_us} µs; ` +
    `refused p50 ${report.guard.refused.p50_us} µs / p99 ${report.guard.refused.p99_us} µs); ` +
    `CPU time p50 ${report.guard.cpu.p50_us} µs / p99 ${report.guard.cpu.p99_us} µs; ` +
    `a bare parse: p50 ${report.parseOnly.p50_us} µs, p99 ${report.parseOnly.p99_us} µs ` +
    `(load average ${report.machine.loadAverage1m} on ${report.machine.cores} cores).`,
);
