-- A model step defers the commits it follows with a durable one (src/db/commit-durability.ts); when a step
-- ends without such a write it flushes the log itself with pg_logical_emit_message(..., flush => true), the
-- one function PostgreSQL 17 and later offer for "flush the WAL up to here" to a role that is not a superuser.
-- Like the functions migration 013 took away, it writes to the server's log on demand: the roles that run
-- model-written SQL must not be able to fill the WAL with it, so PUBLIC loses it and brigade_app alone keeps it.
DO $$
DECLARE
  fn regprocedure;
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    RAISE EXCEPTION 'migration 023 must run as a superuser once: it revokes pg_logical_emit_message from PUBLIC so that the roles running model-written SQL cannot write to the WAL'
      USING HINT = 'Run `npm run migrate` once with a DATABASE_URL whose login is a superuser, then start Brigade as usual.';
  END IF;
  FOR fn IN
    SELECT p.oid::regprocedure FROM pg_proc p
     WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname = 'pg_logical_emit_message'
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO brigade_app', fn);
  END LOOP;
END $$;
