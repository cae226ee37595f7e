// A person's schedules as personal data (issue 48): exported with the rest, and erased first, Temporal Schedules
// and rows, so that no run starts a conversation for them while the erasure takes the conversations away.
import { asUser } from '../db/pool.ts';
import { deleteSchedule, listSchedules } from '../db/schedules.ts';
import type { PersonalDataKind } from '../protection/personal-data.ts';
import { deleteTemporalSchedule } from './temporal-schedule.ts';

export const schedulesKind: PersonalDataKind = {
  name: 'schedules',
  // before the conversations (100)
  order: 50,
  async export({ pool, user }) {
    const rows = await asUser(pool, user, (db) => listSchedules(db));
    return rows.map(({ id, agent, text, everyMs, cron, conversationId, paused, lastRun, createdAt }) => ({
      id,
      agent,
      text,
      everyMs,
      cron,
      conversationId,
      paused,
      lastRun,
      createdAt,
    }));
  },
  async erase({ pool, user, client }) {
    const rows = await asUser(pool, user, (db) => listSchedules(db));
    for (const row of rows) {
      await deleteTemporalSchedule(client, row.id);
      await asUser(pool, user, (db) => deleteSchedule(db, row.id));
    }
    return rows.length;
  },
};
