// What the beer finder's API tests share: a Gemini script for the recommendation turn, and the client's
// history as the database holds it.
import pg from 'pg';
import { simplifyBreweryName } from '../../src/agents/beer/names.ts';
import { type FakeGemini, type FakeReply, type RecordedRequest, endsWithToolResults, lastContent, reply } from './fake-gemini.ts';

export const SAN_DIEGO_CLIENT = 'CLT-CCW784';

/**
 * Chat turns: a user message asking for recommendations calls recommend_breweries; tool results get a
 * closing sentence. Non-streamed generateContent calls are the grounded summaries.
 */
export function scriptBeerGemini(fake: FakeGemini): void {
  fake.scriptFn(beerScript);
}

/** The script scriptBeerGemini installs, for a test that answers some requests its own way first. */
export function beerScript(request: RecordedRequest): FakeReply {
  if (!request.stream) {
    const prompt = String(request.body.contents?.[0]?.parts?.[0]?.text ?? '');
    const name = /^Name: (.+)$/m.exec(prompt)?.[1] ?? 'the brewery';
    return reply.grounded(
      `${name} brews hop-forward ales and runs a busy taproom with weekend tours.`,
      [`${name} taproom`],
      [{ uri: 'https://example.com/a' }, { uri: 'https://example.com/b' }],
    );
  }
  if (endsWithToolResults(request)) return reply.text('Those are the breweries I found for you.');
  const said = String(lastContent(request)?.parts?.find((part) => typeof part.text === 'string')?.text ?? '');
  // "... again": the person asks for the breweries already offered, too
  if (/recommend/i.test(said))
    return reply.calls({ name: 'recommend_breweries', args: /\bagain\b/i.test(said) ? { include_earlier: true } : {} });
  return reply.text('How can I help?');
}

export const groundingCalls = (fake: FakeGemini) => fake.requests.filter((request) => !request.stream && request.model).length;

/** Every brewery the client bought from, simplified as the search compares them, plus its own name. */
export async function historyOf(adminUrl: string, client: string): Promise<Set<string>> {
  const db = new pg.Client({ connectionString: adminUrl });
  await db.connect();
  try {
    const { rows } = await db.query(
      `SELECT brewery AS name FROM beer.purchases WHERE client_id = $1
       UNION SELECT unnest(top3_breweries_recently) FROM beer.customers WHERE client_id = $1
       UNION SELECT client_name FROM beer.customers WHERE client_id = $1`,
      [client],
    );
    return new Set(rows.map((row) => simplifyBreweryName(row.name)));
  } finally {
    await db.end();
  }
}

export async function progressEvents(adminUrl: string, conversationId: string): Promise<Record<string, any>[]> {
  const db = new pg.Client({ connectionString: adminUrl });
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT data FROM events WHERE conversation_id = $1 AND type = 'progress' ORDER BY id`, [
      conversationId,
    ]);
    return rows.map((row) => row.data);
  } finally {
    await db.end();
  }
}

/** Polls the conversation until its turn has ended. */
export async function untilIdle(
  call: (method: string, path: string) => Promise<{ body: any }>,
  id: string,
  timeoutMs = 20_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await call('GET', `/v1/conversations/${id}`);
    if (view.body.status === 'idle') return view.body;
    if (Date.now() > deadline) throw new Error(`conversation ${id} still ${view.body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
