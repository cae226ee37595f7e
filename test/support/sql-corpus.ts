// Hostile and tricky queries for execute_recipe_sql, each with why it is there and what must happen.
// src/agents/recipes/test/sql.test.ts runs every entry against real PostgreSQL with the fixture below (two users,
// soft-deleted rows on both sides); bench/sql-guard.ts times the guard over the same queries.

/** alice's recipes: three live, one soft-deleted. */
export const A1 = '11111111-1111-4111-8111-111111111111'; // Old Fashioned (bourbon)
export const A2 = '22222222-2222-4222-8222-222222222222'; // Manhattan (rye)
export const A3 = '33333333-3333-4333-8333-333333333333'; // Tiramisu
export const A4 = '44444444-4444-4444-8444-444444444444'; // Mint Julep (bourbon), deleted
/** bob's recipes: one live, one soft-deleted. */
export const B1 = 'bbbbbbbb-1111-4111-8111-bbbbbbbbbbbb'; // Bob's Bourbon Sour
export const B2 = 'bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb'; // Bob's Hidden Pie, deleted

export const ALICE_LIVE = [A1, A2, A3];

interface FixtureRecipe {
  id: string;
  user_id: string;
  name: string;
  recipe_type: 'cocktail' | 'food' | 'dessert';
  ingredients: { name: string; quantity: string; unit?: string }[];
  instructions: string[];
  prep_time: number | null;
  servings: number | null;
  tags: string[];
  is_deleted: boolean;
  created_at: string;
}

export const FIXTURE: FixtureRecipe[] = [
  {
    id: A1,
    user_id: 'alice',
    name: 'Old Fashioned',
    recipe_type: 'cocktail',
    ingredients: [
      { name: 'bourbon', quantity: '2', unit: 'oz' },
      { name: 'sugar cube', quantity: '1' },
      { name: 'Angostura bitters', quantity: '2', unit: 'dashes' },
    ],
    instructions: ['Muddle sugar with bitters', 'Add bourbon and ice', 'Stir', 'Garnish with orange peel'],
    prep_time: 5,
    servings: 1,
    tags: ['classic', 'whiskey'],
    is_deleted: false,
    created_at: '2026-01-01T10:00:00Z',
  },
  {
    id: A2,
    user_id: 'alice',
    name: 'Manhattan',
    recipe_type: 'cocktail',
    ingredients: [
      { name: 'rye whiskey', quantity: '2', unit: 'oz' },
      { name: 'sweet vermouth', quantity: '1', unit: 'oz' },
    ],
    instructions: ['Stir with ice', 'Strain'],
    prep_time: 5,
    servings: 1,
    tags: ['classic'],
    is_deleted: false,
    created_at: '2026-01-02T10:00:00Z',
  },
  {
    id: A3,
    user_id: 'alice',
    name: 'Tiramisu',
    recipe_type: 'dessert',
    ingredients: [
      { name: 'mascarpone', quantity: '500', unit: 'g' },
      { name: 'espresso', quantity: '300', unit: 'ml' },
    ],
    instructions: ['Whisk', 'Layer', 'Chill'],
    prep_time: 30,
    servings: 8,
    tags: ['italian'],
    is_deleted: false,
    created_at: '2026-01-03T10:00:00Z',
  },
  {
    id: A4,
    user_id: 'alice',
    name: 'Mint Julep',
    recipe_type: 'cocktail',
    ingredients: [
      { name: 'bourbon', quantity: '2', unit: 'oz' },
      { name: 'mint', quantity: '8', unit: 'leaves' },
    ],
    instructions: ['Muddle mint', 'Add bourbon and crushed ice'],
    prep_time: 5,
    servings: 1,
    tags: ['summer'],
    is_deleted: true,
    created_at: '2026-01-04T10:00:00Z',
  },
  {
    id: B1,
    user_id: 'bob',
    name: "Bob's Bourbon Sour",
    recipe_type: 'cocktail',
    ingredients: [
      { name: 'bourbon', quantity: '2', unit: 'oz' },
      { name: 'lemon juice', quantity: '1', unit: 'oz' },
    ],
    instructions: ['Shake', 'Strain'],
    prep_time: 5,
    servings: 1,
    tags: ['sour'],
    is_deleted: false,
    created_at: '2026-01-05T10:00:00Z',
  },
  {
    id: B2,
    user_id: 'bob',
    name: "Bob's Hidden Pie",
    recipe_type: 'dessert',
    ingredients: [{ name: 'apples', quantity: '6' }],
    instructions: ['Bake'],
    prep_time: 60,
    servings: 8,
    tags: [],
    is_deleted: true,
    created_at: '2026-01-06T10:00:00Z',
  },
];

/** Text that must never appear in what alice gets back: bob's rows, alice's deleted row, other tables, secrets. */
export const LEAK_MARKERS = ["Bob's", 'Mint Julep', 'bbbbbbbb-', '44444444-', '"bob"', 'john@gmail.com', 'rolpassword', 'SCRAM', 'root:'];

export type Expectation =
  /** the guard refuses it before it reaches the database, with a message matching this */
  | { refused: RegExp }
  /** the guard lets it through and the database stops it, with a message matching this */
  | { failed: RegExp }
  /** it runs: only alice's live rows can come back (checked on every result), and these rows exactly when given */
  | { rows: 'confined'; ids?: string[]; count?: number; n?: number }
  /** an UPDATE that runs and changes this many rows (0: another user's or nothing matched) */
  | { affected: number };

export interface CorpusEntry {
  /** what kind of trick it is */
  group: string;
  sql: string;
  /** why it is hostile or tricky */
  why: string;
  expect: Expectation;
}

const refused = (pattern: RegExp): Expectation => ({ refused: pattern });
const confined = (ids?: string[], count?: number, n?: number): Expectation => ({
  rows: 'confined',
  ...(ids ? { ids } : {}),
  ...(count !== undefined ? { count } : {}),
  ...(n !== undefined ? { n } : {}),
});

const NOT_ALLOWED_TABLE = /may not be queried; only SELECT and UPDATE on saved_recipes/;
const FUNCTION = (name: string) => new RegExp(`the function ${name}\\(\\) is not allowed`);
const ONE_STATEMENT = /one statement at a time/;

export const CORPUS: CorpusEntry[] = [
  // --- stacked statements
  {
    group: 'stacked',
    sql: 'SELECT 1; DROP TABLE saved_recipes',
    why: 'a second statement rides on a harmless one',
    expect: refused(ONE_STATEMENT),
  },
  {
    group: 'stacked',
    sql: "SELECT * FROM saved_recipes; DELETE FROM saved_recipes WHERE user_id = 'bob'",
    why: 'a DELETE after a SELECT',
    expect: refused(ONE_STATEMENT),
  },
  {
    group: 'stacked',
    sql: `UPDATE saved_recipes SET notes = 'x' WHERE id = '${A1}'; UPDATE saved_recipes SET notes = 'x' WHERE id = '${A2}'`,
    why: 'two UPDATEs dodge the one-row limit',
    expect: refused(ONE_STATEMENT),
  },
  { group: 'stacked', sql: 'SELECT 1;;SELECT 2', why: 'empty statement between two', expect: refused(ONE_STATEMENT) },
  {
    group: 'stacked',
    sql: 'SELECT 1 --\n; DROP TABLE saved_recipes',
    why: 'a line comment ends before the semicolon',
    expect: refused(ONE_STATEMENT),
  },
  {
    group: 'stacked',
    sql: "SELECT ';'; COPY saved_recipes TO '/tmp/x'",
    why: 'a semicolon inside a string next to a real one',
    expect: refused(ONE_STATEMENT),
  },
  { group: 'stacked', sql: 'BEGIN; DELETE FROM saved_recipes; COMMIT', why: 'a transaction block', expect: refused(ONE_STATEMENT) },
  {
    group: 'stacked',
    sql: 'SELECT name FROM saved_recipes;\n\n\tSET ROLE brigade_app',
    why: 'whitespace-separated second statement',
    expect: refused(ONE_STATEMENT),
  },

  // --- comments
  {
    group: 'comments',
    sql: 'SELECT id FROM saved_recipes -- ; DROP TABLE saved_recipes',
    why: 'a DROP hidden in a line comment is only a comment',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'comments',
    sql: '/* DELETE FROM saved_recipes; */ SELECT id FROM saved_recipes',
    why: 'a DELETE inside a block comment',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'comments',
    sql: 'DEL/**/ETE FROM saved_recipes',
    why: 'a comment splitting a keyword does not join it',
    expect: refused(/does not parse/),
  },
  {
    group: 'comments',
    sql: "SELECT id FROM saved_recipes WHERE name = 'nothing' /* OR 1=1 */",
    why: 'a commented-out tautology stays out',
    expect: confined([]),
  },
  {
    group: 'comments',
    sql: '/* /* nested */ DROP TABLE saved_recipes; */ SELECT count(*) AS n FROM saved_recipes',
    why: 'PostgreSQL nests block comments; a naive scanner would not',
    expect: confined(undefined, 1, 3),
  },
  {
    group: 'comments',
    sql: 'SELECT id FROM saved_recipes WHERE is_deleted = false --',
    why: 'a trailing comment cannot swallow the injected filter',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'comments',
    sql: "SELECT id FROM saved_recipes WHERE name = 'x' OR true -- AND NOT is_deleted",
    why: 'commenting out a filter the writer imagined',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'comments',
    sql: 'DELETE/*x*/FROM saved_recipes',
    why: 'a comment as whitespace before FROM',
    expect: refused(/DELETE is not allowed/),
  },

  // --- quoting and casing
  {
    group: 'quoting',
    sql: 'sElEcT id FrOm SAVED_RECIPES',
    why: 'mixed case keywords and an unquoted upper-case name fold to lower case',
    expect: confined(ALICE_LIVE),
  },
  { group: 'quoting', sql: 'SELECT id FROM "saved_recipes"', why: 'a quoted name is the same table', expect: confined(ALICE_LIVE) },
  {
    group: 'quoting',
    sql: 'SELECT * FROM "SAVED_RECIPES"',
    why: 'a quoted upper-case name is another relation',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'quoting',
    sql: 'SELECT * FROM "pg_catalog"."pg_authid"',
    why: 'quoting a catalog does not make it allowed',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  { group: 'quoting', sql: 'SELECT "pg_sleep"(1)', why: 'a quoted function name', expect: refused(FUNCTION('pg_sleep')) },
  { group: 'quoting', sql: 'SELECT PG_SLEEP(1)', why: 'an upper-case function name', expect: refused(FUNCTION('pg_sleep')) },
  {
    group: 'quoting',
    sql: 'SELECT U&"\\0070g_sleep"(1)',
    why: 'a Unicode-escaped identifier spelling pg_sleep',
    expect: refused(FUNCTION('pg_sleep')),
  },
  {
    group: 'quoting',
    sql: 'SELECT $$; DROP TABLE saved_recipes; $$ AS text',
    why: 'dollar quoting hides a statement in a string',
    expect: confined(undefined, 1),
  },
  {
    group: 'quoting',
    sql: "SELECT $tag$'; DELETE FROM saved_recipes; --$tag$ AS text",
    why: 'tagged dollar quoting with a quote inside',
    expect: confined(undefined, 1),
  },
  {
    group: 'quoting',
    sql: "SELECT id FROM saved_recipes WHERE name = 'x'' OR ''1''=''1'",
    why: 'doubled quotes keep the tautology inside the string',
    expect: confined([]),
  },
  {
    group: 'quoting',
    sql: "SELECT id FROM saved_recipes WHERE name = E'x\\' OR 1=1 --'",
    why: 'a backslash-escaped quote in an E string',
    expect: confined([]),
  },
  {
    group: 'quoting',
    sql: 'dElEtE fRoM saved_recipes',
    why: 'casing does not sneak a DELETE past',
    expect: refused(/DELETE is not allowed.*is_deleted = true/),
  },
  { group: 'quoting', sql: 'SELECT id FROM public."saved_recipes"', why: 'schema-qualified and quoted', expect: confined(ALICE_LIVE) },
  {
    group: 'quoting',
    sql: 'SELECT * FROM pg_temp.saved_recipes',
    why: 'a temporary table of the same name would shadow the real one',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'quoting',
    sql: 'SELECT * FROM brigade_template.public.saved_recipes',
    why: 'a database-qualified name',
    expect: refused(NOT_ALLOWED_TABLE),
  },

  // --- other tables
  { group: 'other tables', sql: 'SELECT * FROM customers', why: "the support agent's customers", expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'other tables', sql: 'SELECT * FROM public.orders', why: 'orders, schema-qualified', expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'other tables', sql: 'SELECT text FROM messages', why: "every user's chat transcript", expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'other tables', sql: 'SELECT * FROM conversations', why: 'conversations of every user', expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'other tables', sql: 'SELECT result FROM tool_calls', why: 'recorded tool results', expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'other tables', sql: 'SELECT * FROM schema_migrations', why: 'migration bookkeeping', expect: refused(NOT_ALLOWED_TABLE) },
  {
    group: 'other tables',
    sql: 'SELECT r.name, c.email FROM saved_recipes r JOIN customers c ON true',
    why: 'a join reaching another table',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'other tables',
    sql: 'SELECT name FROM saved_recipes WHERE EXISTS (SELECT 1 FROM customers)',
    why: 'another table in a subquery',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'other tables',
    sql: 'SELECT (SELECT email FROM customers LIMIT 1)',
    why: 'a scalar subquery in the select list',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'other tables',
    sql: 'WITH c AS (SELECT * FROM customers) SELECT * FROM c',
    why: 'another table inside a CTE',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'other tables',
    sql: 'SELECT name FROM saved_recipes UNION SELECT email FROM customers',
    why: 'another table in a UNION arm',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'other tables',
    sql: 'WITH customers AS (SELECT 1 AS x) SELECT * FROM (SELECT * FROM customers) s',
    why: 'a CTE name shadowing a real table is the CTE, and harmless',
    expect: confined(undefined, 1),
  },
  {
    group: 'other tables',
    sql: 'WITH x AS (SELECT * FROM x) SELECT * FROM x',
    why: 'a non-recursive CTE cannot see itself: the inner x is a table',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'other tables',
    sql: 'WITH saved_recipes AS (SELECT * FROM customers) SELECT * FROM saved_recipes',
    why: 'a CTE shadowing the allowed table',
    expect: refused(/may not be named saved_recipes/),
  },
  {
    group: 'other tables',
    sql: "UPDATE customers SET email = 'x@y.z' WHERE id = '1213210'",
    why: "UPDATE of another agent's table",
    expect: refused(NOT_ALLOWED_TABLE),
  },
  { group: 'other tables', sql: 'TABLE customers', why: 'the TABLE shorthand', expect: refused(NOT_ALLOWED_TABLE) },

  // --- system catalogs and server information
  { group: 'catalogs', sql: 'SELECT rolname, rolpassword FROM pg_authid', why: 'password hashes', expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'catalogs', sql: 'SELECT * FROM pg_roles', why: 'role names', expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'catalogs', sql: 'SELECT * FROM pg_catalog.pg_shadow', why: 'password hashes (old view)', expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'catalogs', sql: 'SELECT name, setting FROM pg_settings', why: 'server settings', expect: refused(NOT_ALLOWED_TABLE) },
  { group: 'catalogs', sql: 'SELECT query FROM pg_stat_activity', why: "other sessions' queries", expect: refused(NOT_ALLOWED_TABLE) },
  {
    group: 'catalogs',
    sql: 'SELECT table_name FROM information_schema.tables',
    why: 'schema discovery',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  { group: 'catalogs', sql: 'SELECT relname FROM pg_class', why: 'relation discovery', expect: refused(NOT_ALLOWED_TABLE) },
  {
    group: 'catalogs',
    sql: 'SELECT name FROM saved_recipes WHERE name IN (SELECT usename FROM pg_user)',
    why: 'a catalog in a subquery',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'catalogs',
    sql: "SELECT current_setting('brigade.user_id')",
    why: 'reading settings',
    expect: refused(FUNCTION('current_setting')),
  },
  { group: 'catalogs', sql: 'SELECT version()', why: 'server version fingerprinting', expect: refused(FUNCTION('version')) },
  { group: 'catalogs', sql: 'SELECT current_user', why: 'role names', expect: refused(/CURRENT_USER is not allowed/) },
  { group: 'catalogs', sql: 'SELECT session_user', why: 'the login behind the app', expect: refused(/SESSION_USER is not allowed/) },
  {
    group: 'catalogs',
    sql: 'SELECT current_database(), inet_server_addr()',
    why: 'server discovery',
    expect: refused(FUNCTION('current_database')),
  },
  {
    group: 'catalogs',
    sql: "SELECT 'pg_authid'::regclass",
    why: 'a reg* cast resolves catalog names',
    expect: refused(/casting to regclass is not allowed/),
  },
  {
    group: 'catalogs',
    sql: "SELECT has_table_privilege('customers', 'SELECT')",
    why: 'privilege probing',
    expect: refused(FUNCTION('has_table_privilege')),
  },
  {
    group: 'catalogs',
    sql: "SELECT query_to_xml('SELECT * FROM customers', true, true, '')",
    why: 'runs SQL from a string, past every check',
    expect: refused(FUNCTION('query_to_xml')),
  },

  // --- sleeping and heavy work
  { group: 'sleep', sql: 'SELECT pg_sleep(10)', why: 'ties up a connection', expect: refused(FUNCTION('pg_sleep')) },
  {
    group: 'sleep',
    sql: "SELECT pg_sleep_for('10 minutes')",
    why: 'pg_sleep under another name',
    expect: refused(FUNCTION('pg_sleep_for')),
  },
  {
    group: 'sleep',
    sql: "SELECT pg_catalog.pg_sleep_until(now() + interval '1 hour')",
    why: 'schema-qualified sleep',
    expect: refused(FUNCTION('pg_catalog.pg_sleep_until')),
  },
  {
    group: 'sleep',
    sql: 'SELECT id FROM saved_recipes WHERE pg_sleep(1) IS NOT NULL',
    why: 'sleep per row in WHERE',
    expect: refused(FUNCTION('pg_sleep')),
  },
  {
    group: 'sleep',
    sql: 'SELECT id FROM saved_recipes ORDER BY pg_sleep(1)',
    why: 'sleep in ORDER BY',
    expect: refused(FUNCTION('pg_sleep')),
  },
  {
    group: 'sleep',
    sql: 'WITH s AS (SELECT pg_sleep(5)) SELECT * FROM s',
    why: 'sleep inside a CTE',
    expect: refused(FUNCTION('pg_sleep')),
  },
  {
    group: 'sleep',
    sql: `UPDATE saved_recipes SET notes = (SELECT pg_sleep(5))::text WHERE id = '${A1}'`,
    why: 'sleep inside an UPDATE',
    expect: refused(FUNCTION('pg_sleep')),
  },
  {
    group: 'sleep',
    sql: 'SELECT count(*) FROM generate_series(1, 1000000000)',
    why: 'a billion rows out of nothing',
    expect: refused(FUNCTION('generate_series')),
  },
  { group: 'sleep', sql: "SELECT repeat('x', 1000000000)", why: 'a gigabyte string', expect: refused(FUNCTION('repeat')) },
  { group: 'sleep', sql: "SELECT lpad('x', 500000000)", why: 'a huge string from a number', expect: refused(FUNCTION('lpad')) },
  {
    group: 'sleep',
    sql: "SELECT format('%500000000s', 'x')",
    why: "a huge string from format's width",
    expect: refused(FUNCTION('format')),
  },
  // (on a busy machine the timeout may come first: either way the value never reaches the transcript)
  {
    group: 'sleep',
    sql: `SELECT ${'replace('.repeat(5)}'xxxxxxxxxx'${", 'x', 'xxxxxxxxxx')".repeat(5)} AS bomb`,
    why: 'nested replace grows a value tenfold per level',
    expect: refused(/could make a value 1000 times larger than its input, more than the 100 allowed/),
  },
  {
    group: 'sleep',
    sql: `UPDATE saved_recipes SET notes = ${'replace('.repeat(5)}'xxxxxxxxxx'${", 'x', 'xxxxxxxxxx')".repeat(5)} WHERE id = '${A1}'`,
    why: 'a megabyte written into a row',
    expect: refused(/could make a value 1000 times larger than its input, more than the 100 allowed/),
  },
  {
    group: 'sleep',
    sql: 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
    why: 'endless recursion (and a value that doubles with each step)',
    expect: refused(/WITH RECURSIVE is not allowed/),
  },
  { group: 'sleep', sql: 'SELECT id FROM saved_recipes LIMIT 100000', why: 'a huge LIMIT is lowered to 50', expect: confined(ALICE_LIVE) },
  {
    group: 'sleep',
    sql: 'SELECT id FROM saved_recipes LIMIT (SELECT 100000)',
    why: 'a LIMIT that is not a number cannot be capped',
    expect: refused(/LIMIT must be a whole number/),
  },

  // --- other servers, files, large objects, COPY
  {
    group: 'outside',
    sql: "SELECT * FROM dblink('host=evil.example dbname=x', 'SELECT 1') AS t(x int)",
    why: 'another server',
    expect: refused(/column definition lists|dblink/),
  },
  {
    group: 'outside',
    sql: "SELECT dblink_exec('dbname=postgres', 'DROP TABLE saved_recipes')",
    why: 'runs SQL elsewhere as someone else',
    expect: refused(FUNCTION('dblink_exec')),
  },
  { group: 'outside', sql: "SELECT pg_read_file('/etc/passwd')", why: 'reads server files', expect: refused(FUNCTION('pg_read_file')) },
  {
    group: 'outside',
    sql: "SELECT pg_read_binary_file('global/pg_control')",
    why: 'reads server files as bytes',
    expect: refused(FUNCTION('pg_read_binary_file')),
  },
  { group: 'outside', sql: "SELECT * FROM pg_ls_dir('.')", why: 'lists server directories', expect: refused(FUNCTION('pg_ls_dir')) },
  { group: 'outside', sql: "SELECT lo_import('/etc/passwd')", why: 'a file into a large object', expect: refused(FUNCTION('lo_import')) },
  {
    group: 'outside',
    sql: "SELECT lo_from_bytea(0, 'payload')",
    why: 'large objects live outside row-level security',
    expect: refused(FUNCTION('lo_from_bytea')),
  },
  { group: 'outside', sql: 'SELECT lo_get(16384)', why: "reads another user's large object", expect: refused(FUNCTION('lo_get')) },
  {
    group: 'outside',
    sql: "COPY saved_recipes TO '/tmp/recipes.csv'",
    why: 'writes a server file',
    expect: refused(/COPY is not allowed/),
  },
  { group: 'outside', sql: "COPY (SELECT 1) TO PROGRAM 'id'", why: 'runs a shell command', expect: refused(/COPY is not allowed/) },
  { group: 'outside', sql: 'COPY saved_recipes FROM STDIN', why: 'bulk insert past every check', expect: refused(/COPY is not allowed/) },
  {
    group: 'outside',
    sql: "SELECT pg_notify('brigade_events', 'spoof')",
    why: 'wakes other sessions',
    expect: refused(FUNCTION('pg_notify')),
  },
  { group: 'outside', sql: "SELECT nextval('events_id_seq')", why: 'sequences', expect: refused(FUNCTION('nextval')) },
  { group: 'outside', sql: 'SELECT pg_terminate_backend(1)', why: 'kills sessions', expect: refused(FUNCTION('pg_terminate_backend')) },
  {
    group: 'outside',
    sql: 'SELECT pg_advisory_lock(1)',
    why: "holds the migrator's kind of lock",
    expect: refused(FUNCTION('pg_advisory_lock')),
  },
  {
    group: 'outside',
    sql: 'SELECT xmlparse(document \'<!DOCTYPE x SYSTEM "file:///etc/passwd"><x/>\')',
    why: 'XML external entities',
    expect: refused(/XML functions is not allowed/),
  },
  {
    group: 'outside',
    sql: "SELECT * FROM ROWS FROM (pg_ls_dir('.'))",
    why: 'a function in ROWS FROM',
    expect: refused(FUNCTION('pg_ls_dir')),
  },
  {
    group: 'outside',
    sql: 'SELECT * FROM jsonb_to_recordset(\'[{"a":1}]\') AS t(a int)',
    why: 'column definition lists name arbitrary types',
    expect: refused(/column definition lists/),
  },

  // --- settings and identity
  {
    group: 'identity',
    sql: "SELECT set_config('brigade.user_id', 'bob', true)",
    why: 'becomes bob for row-level security',
    expect: refused(FUNCTION('set_config')),
  },
  {
    group: 'identity',
    sql: "SELECT name FROM saved_recipes WHERE set_config('brigade.user_id', 'bob', true) IS NOT NULL",
    why: 'switches user mid-query',
    expect: refused(FUNCTION('set_config')),
  },
  {
    group: 'identity',
    sql: "SELECT name FROM saved_recipes, (SELECT pg_catalog.set_config('brigade.user_id', 'bob', true)) s",
    why: 'switches user in a FROM subquery',
    expect: refused(FUNCTION('pg_catalog.set_config')),
  },
  { group: 'identity', sql: "SET brigade.user_id = 'bob'", why: 'SET of the identity setting', expect: refused(/SET is not allowed/) },
  { group: 'identity', sql: 'SET ROLE brigade_app', why: 'leaves the restricted role', expect: refused(/SET is not allowed/) },
  { group: 'identity', sql: 'RESET ROLE', why: 'back to the login (a superuser when embedded)', expect: refused(/SET is not allowed/) },
  {
    group: 'identity',
    sql: "SELECT set_config('role', 'postgres', true)",
    why: 'role switch through a function',
    expect: refused(FUNCTION('set_config')),
  },
  { group: 'identity', sql: 'SET SESSION AUTHORIZATION postgres', why: 'becomes another login', expect: refused(/SET is not allowed/) },
  { group: 'identity', sql: 'SET statement_timeout = 0', why: 'lifts the timeout', expect: refused(/SET is not allowed/) },
  { group: 'identity', sql: 'SHOW ALL', why: 'reads every setting', expect: refused(/SHOW is not allowed/) },
  { group: 'identity', sql: 'SELECT $1', why: 'a parameter the tool never binds', expect: refused(/a parameter/) },

  // --- writing CTEs
  {
    group: 'writing CTE',
    sql: "WITH d AS (DELETE FROM saved_recipes WHERE user_id = 'bob' RETURNING *) SELECT * FROM d",
    why: 'a DELETE inside a SELECT',
    expect: refused(/writing CTEs are not allowed/),
  },
  {
    group: 'writing CTE',
    sql: "WITH u AS (UPDATE saved_recipes SET user_id = 'alice' RETURNING *) SELECT count(*) FROM u",
    why: 'an unbounded UPDATE inside a SELECT',
    expect: refused(/writing CTEs are not allowed/),
  },
  {
    group: 'writing CTE',
    sql: "WITH i AS (INSERT INTO saved_recipes (id, user_id, name, recipe_type) VALUES (gen_random_uuid(), 'bob', 'x', 'food') RETURNING id) SELECT * FROM i",
    why: 'an INSERT inside a SELECT',
    expect: refused(/writing CTEs are not allowed/),
  },
  {
    group: 'writing CTE',
    sql: `WITH d AS (DELETE FROM saved_recipes RETURNING id) UPDATE saved_recipes SET notes = 'x' WHERE id = '${A1}'`,
    why: 'a DELETE inside an UPDATE',
    expect: refused(/writing CTEs are not allowed/),
  },
  {
    group: 'writing CTE',
    sql: 'SELECT * FROM (WITH d AS (DELETE FROM saved_recipes RETURNING *) SELECT * FROM d) s',
    why: 'a writing CTE nested in a subquery',
    expect: refused(/writing CTEs are not allowed/),
  },

  // --- locking
  {
    group: 'locking',
    sql: 'SELECT * FROM saved_recipes FOR UPDATE',
    why: 'locks rows others may write',
    expect: refused(/locking clauses/),
  },
  { group: 'locking', sql: 'SELECT * FROM saved_recipes FOR SHARE NOWAIT', why: 'shared row locks', expect: refused(/locking clauses/) },
  {
    group: 'locking',
    sql: 'SELECT * FROM saved_recipes FOR NO KEY UPDATE SKIP LOCKED',
    why: 'queue-style locking',
    expect: refused(/locking clauses/),
  },
  {
    group: 'locking',
    sql: 'SELECT * FROM (SELECT * FROM saved_recipes FOR UPDATE) s',
    why: 'a lock in a subquery',
    expect: refused(/locking clauses/),
  },
  {
    group: 'locking',
    sql: 'LOCK TABLE saved_recipes IN ACCESS EXCLUSIVE MODE',
    why: 'blocks every user',
    expect: refused(/LOCK is not allowed/),
  },

  // --- another user's rows
  {
    group: 'other users',
    sql: "SELECT * FROM saved_recipes WHERE user_id = 'bob'",
    why: "asks for bob's rows by owner",
    expect: confined([]),
  },
  { group: 'other users', sql: `SELECT * FROM saved_recipes WHERE id = '${B1}'`, why: "asks for bob's row by id", expect: confined([]) },
  {
    group: 'other users',
    sql: "SELECT id FROM saved_recipes WHERE name ILIKE '%bourbon%' OR user_id = 'bob' OR true",
    why: 'an OR chain that matches everything',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'other users',
    sql: 'SELECT count(*) AS n FROM saved_recipes',
    why: 'counts only what alice may see',
    expect: confined(undefined, 1, 3),
  },
  {
    group: 'other users',
    sql: `UPDATE saved_recipes SET notes = 'pwned' WHERE id = '${B1}'`,
    why: "changes bob's row",
    expect: { affected: 0 },
  },
  {
    group: 'other users',
    sql: `UPDATE saved_recipes SET is_deleted = false WHERE id = '${B2}'`,
    why: "restores bob's deleted row",
    expect: { affected: 0 },
  },
  {
    group: 'other users',
    sql: "UPDATE saved_recipes SET name = 'mine now' WHERE user_id = 'bob'",
    why: "renames bob's rows",
    expect: { affected: 0 },
  },
  {
    group: 'other users',
    sql: `UPDATE saved_recipes SET user_id = 'alice' WHERE id = '${B1}'`,
    why: "takes bob's row",
    expect: refused(/user_id cannot be changed/),
  },
  {
    group: 'other users',
    sql: `UPDATE saved_recipes SET user_id = 'bob' WHERE id = '${A1}'`,
    why: 'gives a row away (escapes row-level security)',
    expect: refused(/user_id cannot be changed/),
  },
  {
    group: 'other users',
    sql: `UPDATE saved_recipes SET (name, user_id) = ('x', 'bob') WHERE id = '${A1}'`,
    why: 'the owner changed through a multi-column SET',
    expect: refused(/user_id cannot be changed/),
  },

  // --- soft-deleted rows
  {
    group: 'soft delete',
    sql: 'SELECT * FROM saved_recipes WHERE is_deleted = true',
    why: 'asks for deleted rows outright',
    expect: confined([]),
  },
  {
    group: 'soft delete',
    sql: 'SELECT id FROM saved_recipes WHERE is_deleted OR true',
    why: 'OR defeats a naively appended filter',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'soft delete',
    sql: "SELECT id FROM saved_recipes WHERE name = 'Mint Julep' OR is_deleted",
    why: 'OR on the deleted flag',
    expect: confined([]),
  },
  {
    group: 'soft delete',
    sql: 'SELECT id FROM saved_recipes WHERE NOT is_deleted OR is_deleted',
    why: 'a tautology over the flag',
    expect: confined(ALICE_LIVE),
  },
  { group: 'soft delete', sql: `SELECT * FROM saved_recipes WHERE id = '${A4}'`, why: 'a deleted row by id', expect: confined([]) },
  {
    group: 'soft delete',
    sql: 'SELECT count(*) FILTER (WHERE is_deleted) AS n FROM saved_recipes',
    why: 'counts deleted rows through an aggregate filter',
    expect: confined(undefined, 1, 0),
  },
  {
    group: 'soft delete',
    sql: 'SELECT id FROM saved_recipes WHERE is_deleted IS NOT FALSE OR 1 = 1',
    why: 'IS NOT FALSE and a tautology',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'soft delete',
    sql: 'SELECT * FROM saved_recipes AS r(a, b, c) WHERE true',
    why: 'a column alias list renames is_deleted',
    expect: confined(undefined, 3),
  },
  { group: 'soft delete', sql: 'SELECT id FROM ONLY saved_recipes WHERE is_deleted', why: 'ONLY', expect: confined([]) },
  { group: 'soft delete', sql: 'TABLE saved_recipes', why: 'the TABLE shorthand still gets the filter', expect: confined(ALICE_LIVE) },
  {
    group: 'soft delete',
    sql: 'SELECT name FROM saved_recipes WHERE is_deleted = 1',
    why: 'a SQLite habit a model brings: a clear error',
    expect: refused(/is_deleted is a boolean in PostgreSQL/),
  },

  // --- subqueries, joins
  {
    group: 'subqueries',
    sql: `SELECT (SELECT name FROM saved_recipes WHERE id = '${A4}') AS name`,
    why: 'a deleted row through a scalar subquery',
    expect: confined(undefined, 1),
  },
  {
    group: 'subqueries',
    sql: 'SELECT s.id FROM (SELECT * FROM saved_recipes) s WHERE s.is_deleted',
    why: 'a derived table',
    expect: confined([]),
  },
  {
    group: 'subqueries',
    sql: 'SELECT id FROM saved_recipes WHERE EXISTS (SELECT 1 FROM saved_recipes d WHERE d.is_deleted)',
    why: 'existence of deleted rows leaks through EXISTS',
    expect: confined([]),
  },
  {
    group: 'subqueries',
    sql: 'SELECT id FROM saved_recipes WHERE id IN (SELECT id FROM saved_recipes WHERE is_deleted)',
    why: 'IN over deleted rows',
    expect: confined([]),
  },
  {
    group: 'subqueries',
    sql: 'SELECT ARRAY(SELECT name FROM saved_recipes) AS names',
    why: 'ARRAY subquery',
    expect: confined(undefined, 1),
  },
  {
    group: 'subqueries',
    sql: 'SELECT b.id FROM saved_recipes a RIGHT JOIN saved_recipes b ON false',
    why: 'the outer side of a join',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'subqueries',
    sql: 'SELECT coalesce(a.id, b.id) AS id FROM saved_recipes a FULL JOIN saved_recipes b ON a.id = b.id',
    why: 'both sides of a full join',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'subqueries',
    sql: 'SELECT l.id FROM saved_recipes r LEFT JOIN LATERAL (SELECT id FROM saved_recipes x WHERE x.is_deleted) l ON true',
    why: 'a lateral subquery',
    expect: confined(undefined, 3),
  },
  {
    group: 'subqueries',
    sql: 'SELECT r.id FROM saved_recipes r JOIN saved_recipes d USING (id) WHERE d.is_deleted',
    why: 'a join on the deleted side',
    expect: confined([]),
  },
  {
    group: 'subqueries',
    sql: 'SELECT r.id FROM saved_recipes r CROSS JOIN saved_recipes d WHERE r.id = d.id OR d.is_deleted',
    why: 'a cross join with an OR on the deleted side',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'subqueries',
    sql: 'WITH d AS (SELECT * FROM saved_recipes WHERE is_deleted) SELECT id FROM d',
    why: 'deleted rows through a CTE',
    expect: confined([]),
  },
  {
    group: 'subqueries',
    sql: 'WITH RECURSIVE t AS (SELECT id, 1 AS depth FROM saved_recipes UNION SELECT id, depth + 1 FROM t WHERE depth < 2) SELECT DISTINCT id FROM t',
    why: 'a recursive CTE over the table',
    expect: refused(/WITH RECURSIVE is not allowed/),
  },
  {
    group: 'subqueries',
    sql: "SELECT e->>'name' AS ingredient FROM saved_recipes, jsonb_array_elements(ingredients) e WHERE is_deleted",
    why: 'a set-returning function beside the table',
    expect: confined([]),
  },

  // --- UNION and friends
  {
    group: 'union',
    sql: 'SELECT id FROM saved_recipes WHERE false UNION SELECT id FROM saved_recipes WHERE is_deleted',
    why: 'deleted rows in a second arm',
    expect: confined([]),
  },
  {
    group: 'union',
    sql: 'SELECT id FROM saved_recipes UNION ALL SELECT id FROM saved_recipes WHERE is_deleted OR true',
    why: 'both arms filtered',
    expect: confined([...ALICE_LIVE, ...ALICE_LIVE]),
  },
  {
    group: 'union',
    sql: 'SELECT id::text FROM saved_recipes UNION SELECT usename::text FROM pg_user',
    why: 'a catalog in a UNION arm',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'union',
    sql: 'SELECT id FROM saved_recipes EXCEPT SELECT id FROM saved_recipes WHERE is_deleted',
    why: 'EXCEPT',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'union',
    sql: 'SELECT id FROM saved_recipes INTERSECT SELECT id FROM saved_recipes',
    why: 'INTERSECT',
    expect: confined(ALICE_LIVE),
  },
  {
    group: 'union',
    sql: 'SELECT 1 UNION SELECT pg_sleep(1)::int',
    why: 'a function in a UNION arm',
    expect: refused(FUNCTION('pg_sleep')),
  },
  {
    group: 'union',
    sql: "SELECT id FROM saved_recipes UNION VALUES ('00000000-0000-4000-8000-000000000000'::uuid)",
    why: 'VALUES only returns what it was given',
    expect: confined(undefined, 4),
  },

  // --- statements other than SELECT and UPDATE
  {
    group: 'statements',
    sql: `DELETE FROM saved_recipes WHERE id = '${A1}'`,
    why: 'hard delete: the error points to the soft delete',
    expect: refused(/DELETE is not allowed\. To delete a recipe, soft-delete it: UPDATE saved_recipes SET is_deleted = true/),
  },
  {
    group: 'statements',
    sql: "INSERT INTO saved_recipes (id, user_id, name, recipe_type) VALUES (gen_random_uuid(), 'alice', 'x', 'food')",
    why: 'INSERT: the error points to save_recipe',
    expect: refused(/INSERT is not allowed\. New recipes are saved with the save_recipe tool/),
  },
  {
    group: 'statements',
    sql: 'INSERT INTO saved_recipes SELECT * FROM saved_recipes',
    why: 'INSERT ... SELECT',
    expect: refused(/save_recipe/),
  },
  { group: 'statements', sql: 'DROP TABLE saved_recipes', why: 'DDL: drops the table', expect: refused(/DROP is not allowed/) },
  { group: 'statements', sql: 'TRUNCATE saved_recipes', why: 'mass delete', expect: refused(/TRUNCATE is not allowed/) },
  {
    group: 'statements',
    sql: 'ALTER TABLE saved_recipes DISABLE ROW LEVEL SECURITY',
    why: 'switches off the isolation',
    expect: refused(/ALTER is not allowed/),
  },
  {
    group: 'statements',
    sql: 'CREATE TABLE loot AS SELECT * FROM saved_recipes',
    why: 'copies rows out',
    expect: refused(/CREATE TABLE AS/),
  },
  {
    group: 'statements',
    sql: 'SELECT * INTO loot FROM saved_recipes',
    why: 'SELECT INTO creates a table',
    expect: refused(/SELECT INTO creates a table/),
  },
  {
    group: 'statements',
    sql: 'GRANT ALL ON saved_recipes TO PUBLIC',
    why: 'privilege escalation',
    expect: refused(/GRANT\/REVOKE is not allowed/),
  },
  {
    group: 'statements',
    sql: 'CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$',
    why: 'defines code',
    expect: refused(/CREATE FUNCTION is not allowed/),
  },
  {
    group: 'statements',
    sql: 'DO $$ BEGIN PERFORM pg_sleep(1); END $$',
    why: 'anonymous code block',
    expect: refused(/DO is not allowed/),
  },
  {
    group: 'statements',
    sql: 'EXPLAIN ANALYZE SELECT * FROM saved_recipes',
    why: 'EXPLAIN ANALYZE executes and reveals plans',
    expect: refused(/EXPLAIN is not allowed/),
  },
  {
    group: 'statements',
    sql: 'VACUUM FULL saved_recipes',
    why: 'maintenance that locks the table',
    expect: refused(/VACUUM\/ANALYZE is not allowed/),
  },
  {
    group: 'statements',
    sql: 'PREPARE p AS SELECT 1',
    why: 'prepared statements outlive the call',
    expect: refused(/PREPARE is not allowed/),
  },
  {
    group: 'statements',
    sql: 'LISTEN brigade_events',
    why: "listens to other users' notifications",
    expect: refused(/LISTEN is not allowed/),
  },
  { group: 'statements', sql: 'COMMIT', why: 'ends the runtime transaction early', expect: refused(/transaction control/) },
  {
    group: 'statements',
    sql: 'ROLLBACK TO SAVEPOINT brigade_guarded_sql',
    why: "escapes the executor's savepoint",
    expect: refused(/transaction control/),
  },
  {
    group: 'statements',
    sql: 'MERGE INTO saved_recipes t USING saved_recipes s ON t.id = s.id WHEN MATCHED THEN DELETE',
    why: 'MERGE can delete',
    expect: refused(/MERGE is not allowed/),
  },
  { group: 'statements', sql: 'CALL some_procedure()', why: 'procedures', expect: refused(/CALL is not allowed/) },
  { group: 'statements', sql: '', why: 'an empty query', expect: refused(/empty/) },
  { group: 'statements', sql: '-- only a comment', why: 'a query that is only a comment', expect: refused(/empty/) },
  { group: 'statements', sql: 'SELECT \u0000', why: 'a NUL character PostgreSQL cannot take', expect: refused(/NUL character/) },
  {
    group: 'statements',
    sql: "SELECT '\ud800'",
    why: 'an unpaired surrogate PostgreSQL cannot take',
    expect: refused(/unpaired surrogate/),
  },
  {
    group: 'statements',
    sql: `SELECT ${'1 + '.repeat(5000)}1`,
    why: 'a query longer than the limit',
    expect: refused(/longer than 10000 characters/),
  },

  // --- UPDATE tricks
  {
    group: 'update',
    sql: 'UPDATE saved_recipes SET servings = 4',
    why: 'UPDATE without WHERE',
    expect: refused(/UPDATE needs a WHERE clause/),
  },
  {
    group: 'update',
    sql: "UPDATE saved_recipes SET notes = 'x' WHERE true",
    why: 'a WHERE that matches every row: more than one row rolls back',
    expect: { failed: /would change 4 rows.*Nothing was changed/ },
  },
  {
    group: 'update',
    sql: "UPDATE saved_recipes SET notes = 'x' WHERE recipe_type = 'cocktail'",
    why: 'a WHERE that matches several rows',
    expect: { failed: /would change 3 rows/ },
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET id = gen_random_uuid() WHERE id = '${A1}'`,
    why: 'changes the primary key',
    expect: refused(/id cannot be changed/),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET created_at = now() WHERE id = '${A1}'`,
    why: 'rewrites history',
    expect: refused(/created_at cannot be changed/),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET conversation_id = NULL WHERE id = '${A1}'`,
    why: 'rewrites provenance',
    expect: refused(/conversation_id cannot be changed/),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET notes = 'x' WHERE id = '${A1}' RETURNING *`,
    why: 'RETURNING',
    expect: refused(/RETURNING is not supported/),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET notes = c.email FROM customers c WHERE saved_recipes.id = '${A1}'`,
    why: 'UPDATE ... FROM another table',
    expect: refused(/UPDATE \.\.\. FROM is not supported/),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET notes = pg_read_file('/etc/passwd') WHERE id = '${A1}'`,
    why: 'a file read into a column',
    expect: refused(FUNCTION('pg_read_file')),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET notes = (SELECT string_agg(email, ',') FROM customers) WHERE id = '${A1}'`,
    why: 'another table copied into a column',
    expect: refused(NOT_ALLOWED_TABLE),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET is_deleted = 1 WHERE id = '${A1}'`,
    why: 'a SQLite habit a model brings: a clear error',
    expect: refused(/is_deleted is a boolean in PostgreSQL: set it to true or false/),
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET notes = (SELECT notes FROM saved_recipes WHERE id = '${B1}') WHERE id = '${A1}'`,
    why: "copies bob's notes into alice's row: the subquery sees none of bob's rows",
    expect: { affected: 1 },
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET recipe_type = 'poison' WHERE id = '${A1}'`,
    why: 'the CHECK constraint holds',
    expect: { failed: /violates check constraint/ },
  },
  {
    group: 'update',
    sql: `UPDATE saved_recipes SET servings = 4 WHERE id = '${A1}' AND false`,
    why: 'nothing matches',
    expect: { affected: 0 },
  },
];
