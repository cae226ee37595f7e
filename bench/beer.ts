// `npm run bench:beer`: what the beer finder's confirmation and summary cache save in grounding calls, and
// what a cache lookup costs. A scripted run of recommendation requests over the real pieces: PostgreSQL
// (embedded, migrated), the client profiles of the fixture clients, the real OpenBreweryDB client against a
// local OpenBreweryDB serving the fixture dataset, the workflow's own search plan and picking, the real
// summary cache, and the real @google/genai client against a local Gemini-compatible server that counts
// grounding calls. Time is simulated: between requests the cache's entries are aged by the request spacing,
// so a 30-day TTL is exercised without waiting 30 days. Prints a table, then one JSON line.
//
// Settings (env, with defaults):
//   BENCH_BEER_REQUESTS=240   recommendation requests per run (one run per TTL)
//   BENCH_BEER_DAYS=90        simulated days the requests are spread over, evenly
//   BENCH_BEER_YES=0.3        probability that a user asks for details on one presented brewery
//   BENCH_BEER_ZIPF=1         popularity of clients: request share of the k-th client ~ 1/k^s (0: uniform)
//   BENCH_BEER_TTLS=7,30,90   TTLs in days, one run each
//   BENCH_BEER_SEED=42        seed of the scripted users' choices
//   BENCH_BEER_BUSY=1200      requests of a second, busier series over the same days (0 skips it)
//
// A client's recommendations are searched live the first time and reused afterwards: with the same profile
// and the same dataset the workflow presents the same breweries, so the searches change no figure here.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.ts';
import { asUser, createPool } from '../src/db/pool.ts';
import { createGeminiTaskModel } from '../src/model/task-model.ts';
import {
  type BreweryResult,
  MAX_RECOMMENDATIONS,
  MIN_RECOMMENDATIONS,
  SearchBreweriesArgs,
  addNewBreweries,
  searchPlan,
} from '../src/agents/beer/definitions.ts';
import { startEmbeddedPostgres } from '../stack/embedded-postgres.ts';
import { freePort } from '../stack/ports.ts';
import { toClientProfile } from '../src/agents/beer/profile-adapter.ts';
import { getClientProfile } from '../src/agents/beer/profile.ts';
import { searchBreweries } from '../src/agents/beer/search.ts';
import { getWebsiteSummary } from '../src/agents/beer/summary.ts';
import { reply, startFakeGemini } from '../test/support/fake-gemini.ts';
import { startFakeOpenBreweryDb } from '../test/support/fake-openbrewerydb.ts';
import { round, summarise } from './stats.ts';

const REQUESTS = Number(process.env.BENCH_BEER_REQUESTS ?? 240);
const DAYS = Number(process.env.BENCH_BEER_DAYS ?? 90);
const P_YES = Number(process.env.BENCH_BEER_YES ?? 0.3);
const ZIPF = Number(process.env.BENCH_BEER_ZIPF ?? 1);
const TTLS = (process.env.BENCH_BEER_TTLS ?? '7,30,90').split(',').map(Number);
const SEED = Number(process.env.BENCH_BEER_SEED ?? 42);
const BUSY = Number(process.env.BENCH_BEER_BUSY ?? 1200);
/** Which presented brewery a "yes" picks: people favour the top of a list. */
const POSITION_WEIGHTS = [0.4, 0.25, 0.15, 0.12, 0.08];
const DAY_S = 86_400;

function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weighted(random: () => number, weights: number[]): number {
  const total = weights.reduce((sum, w) => sum + w, 0);
  let at = random() * total;
  for (const [index, weight] of weights.entries()) {
    at -= weight;
    if (at < 0) return index;
  }
  return weights.length - 1;
}

async function main(): Promise<void> {
  const started = performance.now();
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'brigade-bench-beer-'));
  await fs.chmod(tmp, 0o755);
  const postgres = await startEmbeddedPostgres({
    dataDir: path.join(tmp, 'pg'),
    port: await freePort(),
    database: 'brigade',
    ephemeral: true,
  });
  const api = await startFakeOpenBreweryDb();
  const gemini = await startFakeGemini();
  gemini.scriptFn((request) => {
    const prompt = String(request.body.contents?.[0]?.parts?.[0]?.text ?? '');
    const name = /^Name: (.+)$/m.exec(prompt)?.[1] ?? 'the brewery';
    return reply.grounded(`${name}: a summary.`, [`${name} brewery`], [{ uri: 'https://example.com/1' }, { uri: 'https://example.com/2' }]);
  });
  const groundingCalls = () => gemini.requests.filter((r) => !r.stream && r.model).length;
  try {
    await migrate(postgres.url);
    const pool = createPool(postgres.url);
    const admin = new pg.Pool({ connectionString: postgres.url, max: 2 });
    // PostgreSQL stops at the end while idle clients may still be open: that is not an error of the run.
    for (const p of [pool, admin]) p.on('error', () => undefined);
    const taskModel = createGeminiTaskModel({
      apiKey: 'bench',
      baseUrl: gemini.baseUrl,
      model: 'gemini-2.5-flash',
      imageModel: 'img',
      timeoutMs: 10_000,
    });
    const obdb = { baseUrl: api.baseUrl, timeoutMs: 5_000, maxAttempts: 3 };

    const { rows: clientRows } = await admin.query<{ client_id: string }>('SELECT client_id FROM beer.customers ORDER BY client_id');
    const clients = clientRows.map((row) => row.client_id);
    const popularity = clients.map((_, k) => 1 / (k + 1) ** ZIPF);

    /** The workflow's steps 1-3 for one client: profile, the search plan, 3 to 5 new breweries. */
    const memo = new Map<string, BreweryResult[]>();
    const recommend = async (clientId: string): Promise<BreweryResult[]> => {
      const known = memo.get(clientId);
      if (known) return known;
      const raw = await asUser(pool, 'bench', (db) => getClientProfile(db, clientId));
      const profile = 'status' in raw ? null : toClientProfile({ ...raw });
      if (!profile) throw new Error(`no profile for ${clientId}`);
      const found: BreweryResult[] = [];
      const seen = new Set<string>();
      for (const query of searchPlan(profile)) {
        if (found.length >= MIN_RECOMMENDATIONS) break;
        const result = await searchBreweries(
          SearchBreweriesArgs.parse({ ...query, brewery_history: profile.brewery_history, per_page: 50 }),
          obdb,
        );
        addNewBreweries(found, seen, result.breweries);
      }
      const picks = found.slice(0, MAX_RECOMMENDATIONS);
      memo.set(clientId, picks);
      return picks;
    };

    const series = async (requests: number) => {
      const runs = [];
      for (const ttlDays of TTLS) {
        await admin.query('TRUNCATE beer_website_summaries');
        const random = rng(SEED);
        const groundedBefore = groundingCalls();
        const lookups: number[] = [];
        let presented = 0;
        let asked = 0;
        let hits = 0;
        let stale = 0;
        let misses = 0;
        let lastDay = 0;
        const distinct = new Set<string>();
        let invalid = 0;
        for (let i = 0; i < requests; i += 1) {
          const day = (i * DAYS) / requests;
          // time passes: every cached entry gets older by the spacing between requests
          await admin.query('UPDATE beer_website_summaries SET created_at = created_at - make_interval(secs => $1)', [
            (day - lastDay) * DAY_S,
          ]);
          lastDay = day;
          const client = clients[weighted(random, popularity)]!;
          const picks = await recommend(client);
          presented += picks.length;
          if (random() >= P_YES || picks.length === 0) continue;
          const chosen = picks[weighted(random, POSITION_WEIGHTS.slice(0, picks.length))]!;
          asked += 1;
          distinct.add(chosen.brewery_id);
          const summary = await getWebsiteSummary(
            { brewery_name: chosen.brewery_name, url: chosen.website_url, brewery_type: chosen.brewery_type },
            { pool, taskModel, charge: { userId: 'bench', key: 'summary' }, ttlMs: ttlDays * DAY_S * 1000 },
          );
          lookups.push(summary.metadata.lookup_ms);
          if (summary.cache_status === 'CACHE_HIT') hits += 1;
          else if (summary.cache_status === 'CACHE_STALE') stale += 1;
          else if (summary.cache_status === 'CACHE_MISS') misses += 1;
          else if (summary.status === 'INVALID_URL') invalid += 1;
        }
        const made = groundingCalls() - groundedBefore;
        runs.push({
          ttlDays,
          requests,
          presented,
          eagerGroundingCalls: presented,
          detailsAsked: asked,
          distinctBreweriesAsked: distinct.size,
          cache: { hits, stale, misses },
          /** chosen breweries without a usable website: INVALID_URL, no lookup, no call */
          invalidUrl: invalid,
          groundingCalls: made,
          savedByConfirmation: presented - asked,
          savedByCache: hits,
          savedTotalPct: round((1 - made / presented) * 100),
          savedByConfirmationPct: round(((presented - asked) / presented) * 100),
          hitRatePct: hits + stale + misses ? round((hits / (hits + stale + misses)) * 100) : null,
          lookupMs: summarise(lookups),
        });
      }
      return runs;
    };
    const runs = await series(REQUESTS);
    const busy = BUSY > 0 ? await series(BUSY) : [];

    // Cache lookups on hits alone, many of them, for a steadier p50/p99 (one brewery, warm).
    const warm = { brewery_name: 'Stone Brewing', url: 'http://www.stonebrew.com' };
    await getWebsiteSummary(warm, { pool, taskModel, charge: { userId: 'bench', key: 'summary' }, ttlMs: 30 * DAY_S * 1000 });
    const hitLookups: number[] = [];
    for (let i = 0; i < 500; i += 1) {
      hitLookups.push(
        (await getWebsiteSummary(warm, { pool, taskModel, charge: { userId: 'bench', key: 'summary' }, ttlMs: 30 * DAY_S * 1000 })).metadata
          .lookup_ms,
      );
    }

    // Concurrency: 8 conversations asking for the same uncached brewery at once.
    const before = groundingCalls();
    gemini.scriptFn((request) =>
      reply.delay(
        200,
        reply.grounded(
          `${/^Name: (.+)$/m.exec(String(request.body.contents?.[0]?.parts?.[0]?.text))?.[1]}: a summary.`,
          ['q'],
          [{ uri: 'https://e.com' }],
        ),
      ),
    );
    const burst = await Promise.all(
      Array.from({ length: 8 }, () =>
        getWebsiteSummary(
          { brewery_name: 'Modern Times Beer', url: 'http://www.moderntimesbeer.com' },
          { pool, taskModel, charge: { userId: 'bench', key: 'summary' }, ttlMs: 30 * DAY_S * 1000 },
        ),
      ),
    );
    const concurrent = {
      callers: 8,
      groundingCalls: groundingCalls() - before,
      hits: burst.filter((r) => r.cache_status === 'CACHE_HIT').length,
    };

    const hitSummary = summarise(hitLookups);
    const lines = [
      `Beer finder: grounding calls over ${REQUESTS} scripted recommendation requests per TTL, spread evenly over ${DAYS} simulated days`,
      `(20 fixture clients, request share of the k-th ~ 1/k^${ZIPF}; a user asks for details with p=${P_YES}, picking the k-th presented brewery with weights ${POSITION_WEIGHTS.join('/')};`,
      ` an eager agent without the confirmation would summarise every presented brewery: that is the baseline)`,
      '',
      ...table(`${REQUESTS} requests`, runs),
      ...(busy.length ? ['', ...table(`${BUSY} requests (busier)`, busy)] : []),
      '',
      `Cache lookup on a hit (lock + select), ${hitSummary.count} lookups: p50 ${round(hitSummary.p50, 2)} ms, p99 ${round(hitSummary.p99, 2)} ms, max ${round(hitSummary.max, 2)} ms`,
      `${concurrent.callers} callers at once for one uncached brewery: ${concurrent.groundingCalls} grounding call, ${concurrent.hits} served from the cache`,
      `(${Math.round((performance.now() - started) / 1000)} s on ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)})`,
    ];
    console.log(lines.join('\n'));
    console.log(
      JSON.stringify({
        bench: 'beer',
        settings: { REQUESTS, DAYS, P_YES, ZIPF, TTLS, SEED, BUSY },
        runs,
        busy,
        hitLookupMs: hitSummary,
        concurrent,
      }),
    );
    await pool.end();
    await admin.end();
  } finally {
    await gemini.close();
    await api.close();
    await postgres.stop();
    await fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}

type Run = Record<string, any>;

function table(title: string, runs: Run[]): string[] {
  return [
    title,
    'TTL   presented  asked  no-url  hit/stale/miss  grounding  saved:confirm  saved:cache  saved total  hit rate  lookup p50/p99 ms',
    ...runs.map((r) =>
      [
        `${r.ttlDays}d`.padEnd(5),
        String(r.presented).padStart(9),
        String(r.detailsAsked).padStart(6),
        String(r.invalidUrl).padStart(7),
        `${r.cache.hits}/${r.cache.stale}/${r.cache.misses}`.padStart(15),
        String(r.groundingCalls).padStart(10),
        `${r.savedByConfirmation} (${r.savedByConfirmationPct}%)`.padStart(14),
        String(r.savedByCache).padStart(12),
        `${r.savedTotalPct}%`.padStart(12),
        `${r.hitRatePct}%`.padStart(9),
        `${round(r.lookupMs.p50, 2)}/${round(r.lookupMs.p99, 2)}`.padStart(18),
      ].join(' '),
    ),
  ];
}

await main();
