// get_website_summary_tool: a brewery's website summarised through a shared PostgreSQL cache with a TTL,
// filled by Gemini grounded with Google Search. The cache key is locked while it is checked and filled, so
// conversations asking for the same brewery at once make one grounding call: the others wait and hit.
import { readPrompt } from '../../model/prompts.ts';
import type pg from 'pg';
import type { Charge, TaskModel } from '../../model/task-model.ts';
import type { CacheState, SummaryResult, WebsiteSummaryArgs } from './definitions.ts';
import { simplifyBreweryName } from './names.ts';

export interface SummaryDeps {
  pool: pg.Pool;
  taskModel: TaskModel;
  /** who the grounding call is charged to, in the usage ledger */
  charge: Charge;
  ttlMs: number;
  /** a limit on the grounding call, below the caller's own time limit (the runTool local activity's) */
  groundingTimeoutMs?: number;
}

/** The website's normalized form, or undefined when it is not a usable http(s) address. */
export function normalizeUrl(raw: string): { url: string; key: string } | undefined {
  const text = raw.trim();
  if (!text || /^unavailable$/i.test(text) || /\s/.test(text)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(/^[a-z][a-z\d+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    return undefined;
  }
  if (!['http:', 'https:'].includes(parsed.protocol) || parsed.username || parsed.password) return undefined;
  const host = parsed.hostname.toLowerCase();
  if (!/^[a-z\d-]+(\.[a-z\d-]+)+$/.test(host) || /^\d+(\.\d+)+$/.test(host)) return undefined;
  const path = parsed.pathname.replace(/\/+$/, '');
  return { url: parsed.toString(), key: `${host.replace(/^www\./, '')}${path.toLowerCase()}` };
}

export const nameKey = (name: string): string => simplifyBreweryName(name) || name.trim().toLowerCase();

export async function fillPrompt(args: WebsiteSummaryArgs, url: string): Promise<string> {
  const template = readPrompt('beer', 'web_explorer');
  const values: Record<string, string> = {
    brewery_name: args.brewery_name,
    brewery_type: args.brewery_type || 'unknown',
    address: args.address || 'unknown',
    url,
  };
  return (await template).replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

interface CacheRow {
  summary: string;
  grounding_queries: string[];
  source_count: number;
  model: string | null;
  created_at: Date;
  fresh: boolean;
}

export async function getWebsiteSummary(args: WebsiteSummaryArgs, deps: SummaryDeps): Promise<SummaryResult> {
  const started = performance.now();
  const normalized = normalizeUrl(args.url);
  const base = { brewery_name: args.brewery_name, url: args.url };
  if (!normalized) {
    return {
      ...base,
      status: 'INVALID_URL',
      summary: null,
      cache_status: null,
      cached_at: null,
      error: `"${args.url.slice(0, 200)}" is not a valid http(s) website address.`,
      grounding: null,
      metadata: { lookup_ms: 0, elapsed_ms: Math.round(performance.now() - started), grounded: false, model: null },
    };
  }
  const keys = [nameKey(args.brewery_name), normalized.key];
  const db = await deps.pool.connect();
  try {
    await db.query('BEGIN');
    // Held until COMMIT: a second caller for the same brewery waits here, then finds the fresh row.
    await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(31) || $2, 8))', keys);
    const { rows } = await db.query<CacheRow>(
      `SELECT summary, grounding_queries, source_count, model, created_at,
              created_at > now() - make_interval(secs => $3::double precision / 1000) AS fresh
         FROM beer_website_summaries WHERE name_key = $1 AND url_key = $2`,
      [...keys, deps.ttlMs],
    );
    const lookup_ms = round(performance.now() - started);
    const cached = rows[0];
    if (cached?.fresh) {
      await db.query('COMMIT');
      return fromRow('success', 'CACHE_HIT', cached, { lookup_ms, grounded: false });
    }
    const state: CacheState = cached ? 'CACHE_STALE' : 'CACHE_MISS';
    let reply;
    try {
      reply = await deps.taskModel.complete({
        charge: deps.charge,
        task: 'web_summary',
        prompt: await fillPrompt(args, normalized.url),
        grounding: true,
        ...(deps.groundingTimeoutMs ? { signal: AbortSignal.timeout(deps.groundingTimeoutMs) } : {}),
      });
      if (!reply.text.trim()) throw new Error('the model returned an empty summary');
    } catch (error) {
      await db.query('COMMIT');
      const reason = error instanceof Error ? error.message : String(error);
      // The stale entry stays: better an old summary next time than none.
      const stale = cached ? fromRow('GROUNDING_FAILED', 'CACHE_STALE', cached, { lookup_ms, grounded: false }) : undefined;
      return {
        ...(stale ?? {
          ...base,
          status: 'GROUNDING_FAILED' as const,
          summary: null,
          cache_status: state,
          cached_at: null,
          grounding: null,
          metadata: { lookup_ms, elapsed_ms: 0, grounded: false, model: null },
        }),
        error: `Could not get a grounded summary: ${reason.slice(0, 300)}${cached ? ' (the cached summary is older than the TTL)' : ''}`,
        metadata: { lookup_ms, elapsed_ms: round(performance.now() - started), grounded: false, model: null },
      };
    }
    const queries = reply.grounding?.queries ?? [];
    const sources = reply.grounding?.sources.length ?? 0;
    const { rows: written } = await db.query<{ created_at: Date }>(
      `INSERT INTO beer_website_summaries (name_key, url_key, brewery_name, url, summary, grounding_queries, source_count, model)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (name_key, url_key) DO UPDATE SET brewery_name = EXCLUDED.brewery_name, url = EXCLUDED.url,
         summary = EXCLUDED.summary, grounding_queries = EXCLUDED.grounding_queries, source_count = EXCLUDED.source_count,
         model = EXCLUDED.model, created_at = now()
       RETURNING created_at`,
      [...keys, args.brewery_name, normalized.url, reply.text.trim(), JSON.stringify(queries), sources, reply.model],
    );
    await db.query('COMMIT');
    return {
      ...base,
      status: 'success',
      summary: reply.text.trim(),
      cache_status: state,
      cached_at: written[0]!.created_at.toISOString(),
      grounding: { queries, source_count: sources },
      metadata: { lookup_ms, elapsed_ms: round(performance.now() - started), grounded: true, model: reply.model },
    };
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    db.release();
  }

  function fromRow(
    status: SummaryResult['status'],
    cache: CacheState,
    row: CacheRow,
    meta: { lookup_ms: number; grounded: boolean },
  ): SummaryResult {
    return {
      ...base,
      status,
      summary: row.summary,
      cache_status: cache,
      cached_at: row.created_at.toISOString(),
      grounding: { queries: row.grounding_queries, source_count: row.source_count },
      metadata: { ...meta, elapsed_ms: round(performance.now() - started), model: row.model },
    };
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;
