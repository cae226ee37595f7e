// A user's saved recipes are theirs: GET /v1/me/export gives them all (soft-deleted ones too), and erasing the
// person deletes every one with its image. No rule keeps any: a recipe saved from a conversation is the
// user's own copy, not shared with anyone (docs/security.md).
import type { PersonalDataKind } from '../../protection/personal-data.ts';
import { asUser } from '../../db/pool.ts';
import { recipeImageKey, stagedImageKey } from './image-keys.ts';
import { SAVED_RECIPE_COLUMNS } from './recipe.ts';

export const savedRecipesData: PersonalDataKind = {
  name: 'savedRecipes',
  // before conversations: nothing depends on it, but its rows are read here first
  order: 50,
  async export({ pool, user }) {
    return asUser(
      pool,
      user,
      async (db) => (await db.query(`SELECT ${SAVED_RECIPE_COLUMNS.join(', ')} FROM saved_recipes ORDER BY created_at, id`)).rows,
    );
  },
  async erase({ pool, user, store }) {
    const ids: string[] = await asUser(pool, user, async (db) =>
      (await db.query<{ id: string }>('SELECT id FROM saved_recipes ORDER BY id')).rows.map((row) => row.id),
    );
    // images first: while the rows remain, a retried erasure finds them again
    for (const id of ids) {
      await store.delete(recipeImageKey(id));
      await store.delete(stagedImageKey(id));
    }
    const { rows } = await asUser(pool, user, (db) => db.query('SELECT brigade_erase_saved_recipes($1)', [user]));
    return rows.length;
  },
};
