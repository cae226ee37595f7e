// The persons' wrapped data keys (041_person_data_keys.sql), reached only through its functions: the app has
// no rights on the table. Wrapping and unwrapping are src/protection/person-keys.ts's.
import type pg from 'pg';

export interface WrappedDataKey {
  userId: string;
  keyId: string;
  wrappingKeyId: string;
  wrapped: Buffer;
}

type Queryable = Pick<pg.Pool, 'query'>;

/** The owner of the conversation running as `workflowId` (or having it as a child), with their key when they have one; undefined when no conversation is it. */
export async function dataKeyOfWorkflow(db: Queryable, workflowId: string): Promise<{ userId: string; key?: WrappedDataKey } | undefined> {
  const { rows } = await db.query({
    name: 'brigade.data_key_of_workflow',
    text: 'SELECT user_id, key_id, wrapping_key_id, wrapped FROM brigade_data_key_of_workflow($1)',
    values: [workflowId],
  });
  const row = rows[0];
  if (!row) return undefined;
  return { userId: row.user_id, ...(row.key_id ? { key: fromRow(row) } : {}) };
}

/** Notes `workflowId` as a child of the conversation running as `parentWorkflowId`; false when no conversation is that. */
export async function noteChildWorkflow(db: Queryable, workflowId: string, parentWorkflowId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT brigade_note_child_workflow($1, $2) AS noted', [workflowId, parentWorkflowId]);
  return rows[0].noted === true;
}

export async function dataKeyById(db: Queryable, keyId: string): Promise<WrappedDataKey | undefined> {
  const { rows } = await db.query({
    name: 'brigade.data_key',
    text: 'SELECT user_id, $1::text AS key_id, wrapping_key_id, wrapped FROM brigade_data_key($1)',
    values: [keyId],
  });
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** Adds the key unless the person has one already; returns the one kept (theirs, when another process was first). */
export async function addDataKey(db: Queryable, key: WrappedDataKey): Promise<WrappedDataKey> {
  const { rows } = await db.query(
    'SELECT $1::text AS user_id, key_id, wrapping_key_id, wrapped FROM brigade_add_data_key($1, $2, $3, $4)',
    [key.userId, key.keyId, key.wrappingKeyId, key.wrapped],
  );
  return fromRow(rows[0]);
}

export async function dataKeysToRewrap(db: Queryable, currentKeyId: string, limit: number): Promise<WrappedDataKey[]> {
  const { rows } = await db.query('SELECT user_id, key_id, wrapping_key_id, wrapped FROM brigade_data_keys_to_rewrap($1, $2)', [
    currentKeyId,
    limit,
  ]);
  return rows.map(fromRow);
}

/** Whether the key was re-wrapped (false: it was re-wrapped or erased meanwhile). */
export async function rewrapDataKey(db: Queryable, from: WrappedDataKey, to: { wrappingKeyId: string; wrapped: Buffer }): Promise<boolean> {
  const { rows } = await db.query('SELECT brigade_rewrap_data_key($1, $2, $3, $4) AS done', [
    from.keyId,
    from.wrappingKeyId,
    to.wrappingKeyId,
    to.wrapped,
  ]);
  return rows[0].done === true;
}

/** Deletes the person's data key (within a transaction acting for them); how many went. */
export async function eraseDataKey(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query('SELECT brigade_erase_data_key($1) AS gone', [userId]);
  return Number(rows[0].gone);
}

function fromRow(row: { user_id: string; key_id: string; wrapping_key_id: string; wrapped: Buffer }): WrappedDataKey {
  return { userId: row.user_id, keyId: row.key_id, wrappingKeyId: row.wrapping_key_id, wrapped: row.wrapped };
}
