// Live deltas through the real stack: the real @google/genai client streams from the fake Gemini server in the
// worker's model step, each piece goes by NOTIFY to the API and out to the SSE clients of its conversation, and
// the same text reaches the events table in batches. The web client's reducer (web/src/transcript.ts) merges
// both by offset, so a draft holds the reply exactly once: live, after a resume, and after a retried step.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LIVE_DELTA_CHANNEL, MAX_PAYLOAD_BYTES, livePayloads } from '../../src/db/live-deltas.ts';
import { isStorableText } from '../../src/shared/safe-text.ts';
import { applyEvent, emptyTranscript, type Transcript } from '../../web/src/transcript.ts';
import { type FakeGemini, lastContent, reply } from '../support/fake-gemini.ts';
import { geminiApp } from '../support/gemini-app.ts';
import { type SseEvent, readSse } from '../support/sse.ts';
import { ALICE, CAROL, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fake: FakeGemini;

geminiApp({ checkKey: true }, (parts) => void ({ fake, app } = parts));

const words = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i + 1).padStart(2, '0')} `);

async function conversation(token = ALICE): Promise<string> {
  const created = await app.call('POST', '/v1/conversations', { token, body: { agent: 'support' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

const eventsUrl = (id: string) => `${app.baseUrl}/v1/conversations/${id}/events`;
const isReply = (e: SseEvent) => e.event === 'message' && e.data.data.role === 'assistant';
const deltas = (events: SseEvent[]) => events.filter((e) => e.event === 'message.delta');

/** The events as the web client applies them, with `message` events left out: the draft the deltas alone make. */
function draftsOf(events: SseEvent[], check?: (t: Transcript) => void): Transcript {
  let t = emptyTranscript();
  for (const e of deltas(events)) {
    t = applyEvent(t, { ...(e.id === undefined ? {} : { id: Number(e.id) }), type: e.event!, data: e.data.data });
    check?.(t);
  }
  return t;
}

/** Every delta is the reply's own text at its offset: nothing foreign, nothing shifted. */
function assertAtOffsets(events: SseEvent[], text: string, attempt?: number) {
  for (const e of deltas(events)) {
    const { offset, text: piece } = e.data.data;
    if (attempt !== undefined && e.data.data.attempt !== attempt) continue;
    assert.equal(
      piece,
      text.slice(offset, offset + piece.length),
      `the delta at ${offset} (${e.id === undefined ? 'live' : `event ${e.id}`})`,
    );
  }
}

describe('live deltas', () => {
  test('pieces reach the SSE client as the model sends them, before the reply ends, and the table has them too', async () => {
    const id = await conversation();
    const pieces = words('live', 12);
    const full = pieces.join('');
    fake.script(reply.text(pieces, { intervalMs: 80 }));
    const stream = readSse(eventsUrl(id), { token: ALICE, live: true, until: (events) => events.some((e) => e.event === 'turn.ended') });
    const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'tell me a story' } });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const events = await stream;

    const live = deltas(events).filter((e) => e.id === undefined);
    const final = events.find(isReply)!;
    assert.equal(final.data.data.text, full);
    assert.ok(live.length >= 3, `pieces came live one by one, not in one lump: ${live.length} live deltas`);
    // the reply streams for 11 x 80 ms: the first piece is there long before it ends
    assert.ok(final.at - live[0]!.at > 400, `the first live piece came ${Math.round(final.at - live[0]!.at)} ms before the final message`);
    assert.equal(live[0]!.data.data.offset, 0);
    assert.equal(live[0]!.data.live, true);
    assertAtOffsets(events, full);
    assert.equal(draftsOf(live).drafts[final.data.data.id]?.text, full, 'the live deltas alone carry the whole reply');

    // the table's deltas carry the same text with their offsets, and the web client keeps it once
    const rows = deltas(events).filter((e) => e.id !== undefined);
    assert.ok(rows.length >= 1);
    assert.equal(draftsOf(rows).drafts[final.data.data.id]?.text, full, 'the persisted deltas alone carry the whole reply');
    assert.equal(draftsOf(events).drafts[final.data.data.id]?.text, full, 'live and persisted together: each piece once');
  });

  test('a client that resumes with Last-Event-ID mid-stream ends with exactly the reply text', async () => {
    const id = await conversation();
    const pieces = words('resume', 16);
    const full = pieces.join('');
    fake.script(reply.text(pieces, { intervalMs: 60 }));
    // the first connection drops once it has a persisted delta and a live one after it
    const first = readSse(eventsUrl(id), {
      token: ALICE,
      live: true,
      until: (events) => {
        const rowAt = events.findIndex((e) => e.event === 'message.delta' && e.id !== undefined);
        return rowAt >= 0 && events.slice(rowAt + 1).some((e) => e.event === 'message.delta' && e.id === undefined);
      },
    });
    const turn = app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'tell me a long story' } });
    const before = await first;
    const lastEventId = before.filter((e) => e.id !== undefined).at(-1)!.id!;
    // a few pieces go by while no one listens
    await new Promise((resolve) => setTimeout(resolve, 200));
    const afterwards = await readSse(eventsUrl(id), {
      token: ALICE,
      live: true,
      lastEventId,
      until: (events) => events.some((e) => e.event === 'turn.ended'),
    });
    assert.equal((await turn).status, 200);

    const messageId = afterwards.find(isReply)!.data.data.id;
    const seen = [...before, ...afterwards];
    assertAtOffsets(seen, full);
    const t = draftsOf(seen, (step) => {
      const text = step.drafts[messageId]?.text ?? '';
      assert.ok(full.startsWith(text), `the draft is always a prefix of the reply: "${text}"`);
    });
    assert.equal(t.drafts[messageId]?.text, full, 'no gap, no duplicate');
    // the table's events come once each, in order, across the two connections
    const ids = seen.filter((e) => e.id !== undefined).map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      [...new Set(ids)].sort((a, b) => a - b),
    );
    // ids are each event's place in the conversation (1, 2, 3, …): none missing up to the last one seen
    assert.deepEqual(
      ids,
      Array.from({ length: ids.at(-1)! }, (_, index) => index + 1),
      'every event of the table reached the client',
    );
  });

  test("a user's stream never carries another user's deltas", async () => {
    const [alices, carols] = await Promise.all([conversation(ALICE), conversation(CAROL)]);
    assert.equal((await app.call('GET', `/v1/conversations/${alices}/events`, { token: CAROL })).status, 404);
    const texts: Record<string, string[]> = { alice: words('alicesecret', 10), carol: words('carolword', 10) };
    fake.scriptFn((request) => {
      const said = JSON.stringify(lastContent(request));
      return reply.text(said.includes('alice story') ? texts.alice! : texts.carol!, { intervalMs: 40 });
    });
    try {
      const done = (events: SseEvent[]) => events.some((e) => e.event === 'turn.ended');
      const alice = readSse(eventsUrl(alices), { token: ALICE, live: true, until: done });
      const carol = readSse(eventsUrl(carols), {
        token: CAROL,
        live: true,
        until: (events) => done(events) && events.some((e) => e.event === 'message.delta' && e.data.data.text === 'forged-right'),
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      // a NOTIFY that names Carol's conversation but Alice as its user is not written to Carol's stream;
      // the one that names Carol is (so the first was refused, not lost)
      const forged = (userId: string, text: string) =>
        JSON.stringify({ conversationId: carols, userId, messageId: 'forged', attempt: 1, offset: 0, text });
      await app.adminQuery('SELECT pg_notify($1, $2)', [LIVE_DELTA_CHANNEL, forged('alice', 'forged-wrong-user')]);
      await app.adminQuery('SELECT pg_notify($1, $2)', [LIVE_DELTA_CHANNEL, forged('carol', 'forged-right')]);
      const [a, c] = await Promise.all([
        alice,
        carol,
        app.call('POST', `/v1/conversations/${alices}/messages`, { token: ALICE, body: { text: 'alice story' } }),
        app.call('POST', `/v1/conversations/${carols}/messages`, { token: CAROL, body: { text: 'carol story' } }),
      ]);
      assert.ok(
        deltas(a).some((e) => e.id === undefined),
        'Alice got live deltas',
      );
      assert.ok(
        deltas(c).some((e) => e.id === undefined),
        'Carol got live deltas',
      );
      assert.doesNotMatch(JSON.stringify(c), /alicesecret|forged-wrong-user/);
      assert.doesNotMatch(JSON.stringify(a), /carolword|forged/);
      assertAtOffsets(a, texts.alice!.join(''));
      assertAtOffsets(
        c.filter((e) => e.data.data?.messageId !== 'forged'),
        texts.carol!.join(''),
      );
    } finally {
      fake.scriptFn(undefined);
    }
  });

  test('a piece larger than a NOTIFY payload goes live in parts that join up exactly', async () => {
    // 2-byte, escaped and 4-byte (surrogate pair) characters: about 30 KB of JSON for 15,000 UTF-16 units
    const big = 'é"😀\n'.repeat(3000);
    const delta = { conversationId: 'c', userId: 'u', messageId: 'm', attempt: 1, offset: 7, text: big };
    const parts = livePayloads(delta).map((payload) => {
      assert.ok(Buffer.byteLength(payload) <= MAX_PAYLOAD_BYTES, `a payload of ${Buffer.byteLength(payload)} bytes`);
      return JSON.parse(payload) as typeof delta;
    });
    assert.ok(parts.length >= 4, `${parts.length} parts`);
    let at = 7;
    for (const part of parts) {
      assert.equal(part.offset, at, 'the parts follow one another');
      assert.ok(isStorableText(part.text), 'no part splits a surrogate pair');
      at += part.text.length;
    }
    assert.equal(parts.map((part) => part.text).join(''), big);

    const id = await conversation();
    fake.script(reply.text([big, 'The end.'], { intervalMs: 50 }));
    // the whole piece goes live at once, so the stream must be listening before the turn starts
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const stream = readSse(eventsUrl(id), {
      token: ALICE,
      live: true,
      onOpen: opened,
      until: (events) => events.some((e) => e.event === 'turn.ended'),
    });
    await open;
    assert.equal((await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'a long one' } })).status, 200);
    const events = await stream;
    const final = events.find(isReply)!;
    assert.equal(final.data.data.text, `${big}The end.`);
    const live = deltas(events).filter((e) => e.id === undefined);
    // the big piece alone needs parts.length payloads; 'The end.' may ride with its last one when the publisher is slow
    assert.ok(live.length >= parts.length, `${live.length} live deltas for a piece that needs ${parts.length}`);
    assertAtOffsets(events, final.data.data.text);
    assert.equal(draftsOf(live).drafts[final.data.data.id]?.text, final.data.data.text);
  });

  test('a retried model step adds no duplicate text: the draft starts over with the new attempt', async () => {
    const id = await conversation();
    const first = words('first', 10);
    const second = words('second', 10);
    // the first attempt dies after 5 pieces (some written to the table, all sent live); the retry answers in full
    fake.script(reply.text(first, { intervalMs: 40, breakAfter: 5 }), reply.text(second, { intervalMs: 40 }));
    const stream = readSse(eventsUrl(id), { token: ALICE, live: true, until: (events) => events.some((e) => e.event === 'turn.ended') });
    const turn = await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'tell me a story' } });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const events = await stream;
    const final = events.find(isReply)!;
    assert.equal(final.data.data.text, second.join(''));

    const attempts = [...new Set(deltas(events).map((e) => e.data.data.attempt))];
    assert.deepEqual(attempts, [1, 2], 'both attempts streamed');
    assertAtOffsets(events, first.join(''), 1);
    assertAtOffsets(events, second.join(''), 2);
    const t = draftsOf(events);
    assert.equal(t.drafts[final.data.data.id]?.text, second.join(''), 'the draft is the retried reply, once');

    // the same retry with the same text: the text is there once, not twice
    const again = words('same', 8);
    fake.script(reply.text(again, { intervalMs: 40, breakAfter: 4 }), reply.text(again, { intervalMs: 40 }));
    const second2 = readSse(eventsUrl(id), {
      token: ALICE,
      live: true,
      lastEventId: events.at(-1)!.id!,
      until: (seen) => seen.some((e) => e.event === 'turn.ended'),
    });
    assert.equal((await app.call('POST', `/v1/conversations/${id}/messages`, { body: { text: 'again' } })).status, 200);
    const more = await second2;
    const messageId = more.find(isReply)!.data.data.id;
    assert.equal(draftsOf(more).drafts[messageId]?.text, again.join(''));
    // and from the table alone, as a client that connects afterwards reads it
    const replay = await readSse(eventsUrl(id), {
      token: ALICE,
      until: (seen) => seen.filter((e) => e.event === 'turn.ended').length >= 2,
    });
    assert.equal(draftsOf(replay).drafts[messageId]?.text, again.join(''));
    assert.equal(draftsOf(replay).drafts[final.data.data.id]?.text, second.join(''));
  });
});
