// An OpenBreweryDB v1 client: one request with a time limit, retried with backoff on 5xx, 429 and network
// errors (a timeout counts as one), a bounded number of times. Other 4xx answers are final.
import { z } from 'zod';

/** A brewery as the API returns it; every field may be missing or null. */
export const ApiBrewery = z
  .object({
    id: z.string().nullish(),
    name: z.string().nullish(),
    brewery_type: z.string().nullish(),
    address_1: z.string().nullish(),
    address_2: z.string().nullish(),
    address_3: z.string().nullish(),
    city: z.string().nullish(),
    state_province: z.string().nullish(),
    postal_code: z.string().nullish(),
    country: z.string().nullish(),
    longitude: z.union([z.number(), z.string()]).nullish(),
    latitude: z.union([z.number(), z.string()]).nullish(),
    phone: z.string().nullish(),
    website_url: z.string().nullish(),
    state: z.string().nullish(),
    street: z.string().nullish(),
  })
  .passthrough();
export type ApiBrewery = z.infer<typeof ApiBrewery>;

export interface BreweryQuery {
  by_city?: string;
  by_state?: string;
  by_type?: string;
  per_page?: number;
  page?: number;
}

export interface OpenBreweryDbOptions {
  baseUrl: string;
  timeoutMs: number;
  maxAttempts: number;
  /** first backoff; doubles per attempt up to maxBackoffMs */
  backoffMs?: number;
  maxBackoffMs?: number;
}

export class OpenBreweryDbError extends Error {
  override name = 'OpenBreweryDbError';
  readonly attempts: number;
  readonly status: number | undefined;
  /** the network error's code (ENOTFOUND, ...), for operators: the message says it in words */
  readonly code: string | undefined;
  constructor(message: string, attempts: number, status?: number, code?: string) {
    super(message);
    this.attempts = attempts;
    this.status = status;
    this.code = code;
  }
}

export interface BreweryList {
  breweries: ApiBrewery[];
  attempts: number;
}

class Retryable extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly code: string | undefined;
  constructor(message: string, status?: number, retryAfterMs?: number, code?: string) {
    super(message);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.code = code;
  }
}

/** GET /breweries with the query; throws OpenBreweryDbError once the attempts are spent or on a final 4xx. */
export async function listBreweries(query: BreweryQuery, options: OpenBreweryDbOptions): Promise<BreweryList> {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/breweries`);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
  const backoff = options.backoffMs ?? 250;
  const maxBackoff = options.maxBackoffMs ?? 4_000;
  let last: Retryable | undefined;
  for (let attempt = 1; attempt <= options.maxAttempts; attempt += 1) {
    try {
      return { breweries: await once(url, options.timeoutMs), attempts: attempt };
    } catch (error) {
      if (!(error instanceof Retryable)) {
        const status = error instanceof OpenBreweryDbError ? error.status : undefined;
        throw new OpenBreweryDbError((error as Error).message, attempt, status);
      }
      last = error;
      if (attempt === options.maxAttempts) break;
      const wait = Math.min(maxBackoff, error.retryAfterMs ?? backoff * 2 ** (attempt - 1));
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  throw new OpenBreweryDbError(
    `${last?.message ?? 'OpenBreweryDB failed'} (after ${options.maxAttempts} attempt${options.maxAttempts === 1 ? '' : 's'})`,
    options.maxAttempts,
    last?.status,
    last?.code,
  );
}

async function once(url: URL, timeoutMs: number): Promise<ApiBrewery[]> {
  let response: Response;
  let body: string;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    body = await response.text();
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    if (timedOut) throw new Retryable(`OpenBreweryDB did not answer within ${timeoutMs} ms`);
    const code = (error as { cause?: { code?: string } }).cause?.code;
    throw new Retryable(`OpenBreweryDB could not be reached: ${describe(error, code)}`, undefined, undefined, code);
  }
  if (response.status === 429 || response.status >= 500) {
    const retryAfter = Number(response.headers.get('retry-after'));
    throw new Retryable(
      `OpenBreweryDB answered HTTP ${response.status}`,
      response.status,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
    );
  }
  if (!response.ok) throw new OpenBreweryDbError(`OpenBreweryDB answered HTTP ${response.status}`, 1, response.status);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Retryable('OpenBreweryDB answered with something that is not JSON', response.status);
  }
  const list = z.array(ApiBrewery).safeParse(parsed);
  if (!list.success) throw new OpenBreweryDbError('OpenBreweryDB answered with an unexpected shape', 1, response.status);
  return list.data;
}

// The message reaches the model and, through it, people (the offline model repeats it): network failures in
// words. The code an operator searches for travels beside it (OpenBreweryDbError.code, the result's metadata).
const NETWORK_WORDS: Record<string, string> = {
  ENOTFOUND: 'its host name does not resolve',
  EAI_AGAIN: 'its host name does not resolve',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection was closed before an answer',
};

function describe(error: unknown, code: string | undefined): string {
  if (code) return NETWORK_WORDS[code] ?? 'the connection failed';
  const cause = (error as { cause?: { message?: string } }).cause;
  return cause?.message ?? (error instanceof Error ? error.message : String(error));
}
