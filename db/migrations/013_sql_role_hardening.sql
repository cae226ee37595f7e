-- The roles that run SQL a model wrote (brigade_recipes_sql, brigade_beer_sql) hold on their own, with
-- the parser in src/sql/ out of the way (issue 17). Until now three things PUBLIC may do in any
-- database were shut out by the parser alone:
--   - set_config: the identity row-level security reads (brigade.user_id, brigade.client_id) is a
--     setting, so `SELECT set_config('brigade.user_id', 'bob', true)` inside a query, or
--     `UPDATE pg_settings ...` (whose rule calls set_config), would switch users mid-query;
--   - advisory locks, which outlive the savepoint a guarded query runs in;
--   - pg_notify, which could write into the live-delta channel the API fans out to event streams;
-- and large objects, which are storage outside every table's grants and row-level security.
-- Function privileges are per database, so revoking them from PUBLIC here touches Brigade's database
-- only. brigade_app gets back exactly what the app calls (set_config before it switches role, the
-- notify trigger and live deltas, the summary cache's transaction lock); the model roles are not
-- members of brigade_app, so they inherit none of it. The file functions (pg_read_file, pg_ls_dir,
-- pg_stat_file, lo_import, lo_export) are already superuser-only (or pg_read_server_files) by default;
-- test/sql-roles.test.ts checks that they stay refused.
--
-- Revoking a pg_catalog function's privilege needs its owner, the bootstrap superuser: the login that
-- migrates is one in every shape Brigade starts (embedded, docker-compose, npm run cluster). On a
-- managed PostgreSQL whose login is not a superuser this migration stops with what to do, rather than
-- leave the model roles able to change their identity.
DO $$
DECLARE
  fn regprocedure;
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    RAISE EXCEPTION 'migration 013 must run as a superuser once: it revokes set_config, advisory locks, pg_notify and large-object functions from PUBLIC so that the roles running model-written SQL cannot use them'
      USING HINT = 'Run `npm run migrate` once with a DATABASE_URL whose login is a superuser (or the database owner on a server that lets it change pg_catalog privileges), then start Brigade as usual.';
  END IF;

  FOR fn IN
    SELECT p.oid::regprocedure
      FROM pg_proc p
     WHERE p.pronamespace = 'pg_catalog'::regnamespace
       AND (p.proname IN ('set_config', 'pg_notify')
            OR p.proname LIKE 'pg\_advisory\_%'
            OR p.proname LIKE 'pg\_try\_advisory\_%'
            OR p.proname LIKE 'lo\_%'
            OR p.proname IN ('loread', 'lowrite'))
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
  END LOOP;
END $$;

GRANT EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) TO brigade_app;
GRANT EXECUTE ON FUNCTION pg_catalog.pg_notify(text, text) TO brigade_app;
GRANT EXECUTE ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) TO brigade_app;
