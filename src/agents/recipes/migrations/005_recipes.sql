-- The recipes agent's saved recipes (issue 7; seeds 000 and 001): one table, every user's rows kept
-- apart by row-level security, for the API and the save pipeline (as brigade_app) and for the SQL
-- that the model writes (as brigade_recipes_sql, through execute_recipe_sql).

CREATE TABLE saved_recipes (
  id                uuid PRIMARY KEY,           -- made in the saveRecipe workflow, so a retried insert is a no-op
  user_id           text NOT NULL,
  name              varchar(200) NOT NULL CHECK (btrim(name) <> ''),
  recipe_type       varchar(20) NOT NULL CHECK (recipe_type IN ('cocktail', 'food', 'dessert')),
  ingredients       jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(ingredients) = 'array'),   -- [{name, quantity, unit, notes}]
  instructions      jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(instructions) = 'array'),  -- ["step", ...]
  prep_time         integer CHECK (prep_time >= 0),   -- minutes
  cook_time         integer CHECK (cook_time >= 0),   -- minutes
  servings          integer CHECK (servings > 0),
  source_references jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(source_references) = 'array'),  -- ["https://...", ...]
  notes             text,
  user_notes        text,
  image_url         varchar(500),
  tags              jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(tags) = 'array'),  -- ["string", ...]
  is_deleted        boolean NOT NULL DEFAULT false,   -- soft delete: UPDATE ... SET is_deleted = true, and back
  conversation_id   uuid REFERENCES conversations (id) ON DELETE SET NULL,  -- where it was saved
  created_at        timestamptz NOT NULL DEFAULT now(),
  last_accessed_at  timestamptz NOT NULL DEFAULT now(),
  -- Model-written UPDATEs can set any value: keep every recipe a size a transcript can hold.
  CHECK (octet_length(ingredients::text) <= 100000 AND octet_length(instructions::text) <= 100000
         AND octet_length(source_references::text) <= 20000 AND octet_length(tags::text) <= 5000),
  CHECK (octet_length(notes) <= 20000 AND octet_length(user_notes) <= 20000)
);

-- Every query is one owner's: the owner leads each index.
CREATE INDEX saved_recipes_owner ON saved_recipes (user_id, created_at DESC, id DESC);
CREATE INDEX saved_recipes_name ON saved_recipes (user_id, lower(name));
CREATE INDEX saved_recipes_type ON saved_recipes (user_id, recipe_type);

ALTER TABLE saved_recipes ENABLE ROW LEVEL SECURITY;
-- One policy for every role that touches the table: a user sees and writes only their own rows, and a
-- write may not hand a row to someone else.
CREATE POLICY own_rows ON saved_recipes
  USING (user_id = brigade_current_user())
  WITH CHECK (user_id = brigade_current_user());

-- The app: the save pipeline inserts (INSERT ... ON CONFLICT (id) DO NOTHING), the API reads and
-- records when a recipe was last opened.
GRANT SELECT, INSERT ON saved_recipes TO brigade_app;
GRANT UPDATE (last_accessed_at) ON saved_recipes TO brigade_app;

-- The role that runs SQL a model wrote. It can log in as nobody, own nothing, create nothing; it may
-- SELECT saved_recipes and UPDATE only the columns a user may change: never id, user_id, created_at
-- or conversation_id (where the recipe was saved). No other table is granted to it, and
-- pg_read_server_files, pg_write_server_files, pg_execute_server_program are not (so no file reads,
-- no COPY TO/FROM a file or program). What PUBLIC may do in any database (read the catalogs, call
-- set_config, use large objects) is shut out by the parser in src/sql/: one SELECT or UPDATE, only
-- saved_recipes, only allow-listed functions. The user id that row-level security reads is set by
-- the app before it switches to this role, and only set_config or SET could change it: neither gets
-- through the parser.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'brigade_recipes_sql') THEN
    CREATE ROLE brigade_recipes_sql NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
  END IF;
END $$;

-- brigade_app may switch to it (SET LOCAL ROLE) but does not inherit its rights.
GRANT brigade_recipes_sql TO brigade_app WITH INHERIT FALSE, SET TRUE;

GRANT USAGE ON SCHEMA public TO brigade_recipes_sql;
GRANT SELECT ON saved_recipes TO brigade_recipes_sql;
GRANT UPDATE (name, recipe_type, ingredients, instructions, prep_time, cook_time, servings, source_references,
              notes, user_notes, image_url, tags, is_deleted, last_accessed_at)
  ON saved_recipes TO brigade_recipes_sql;
