-- The identity that row-level security reads (brigade.user_id, brigade.client_id) is a setting, and any
-- role may change a custom setting with a plain SET statement: PostgreSQL has no privilege on SET of a
-- placeholder, and revoking set_config (migration 013) does not cover it. The parser refuses SET, but
-- the database must hold without the parser (issue 17). So for the roles that run SQL a model wrote,
-- the identity counts only while it is sealed: brigade_app, which the model roles cannot call as, seals
-- the settings it made with a keyed hash bound to this session and transaction; a SET that changes
-- either identity breaks the seal, and a restrictive policy then shows no row at all.
CREATE SCHEMA brigade_private;
REVOKE ALL ON SCHEMA brigade_private FROM PUBLIC;
CREATE TABLE brigade_private.identity_key (key bytea NOT NULL);
-- gen_random_uuid is a strong random source built in (no pgcrypto needed); the key never leaves the database.
INSERT INTO brigade_private.identity_key (key)
  VALUES (sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));

-- The seal of the identity set now, in this session and this transaction (now() is the transaction's
-- start, so a seal read in one transaction is worth nothing in the next). The key on both sides of the
-- message keeps the hash from being extended to another identity.
CREATE FUNCTION brigade_identity_seal() RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog
  AS $$
    SELECT encode(sha256(k.key || convert_to(concat_ws('|', pg_backend_pid(), now(),
                                                      coalesce(current_setting('brigade.user_id', true), ''),
                                                      coalesce(current_setting('brigade.client_id', true), '')), 'UTF8') || k.key), 'hex')
      FROM brigade_private.identity_key k
  $$;
REVOKE EXECUTE ON FUNCTION brigade_identity_seal() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_identity_seal() TO brigade_app;

CREATE FUNCTION brigade_identity_sealed() RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$ SELECT coalesce(current_setting('brigade.identity_seal', true) = public.brigade_identity_seal(), false) $$;
REVOKE EXECUTE ON FUNCTION brigade_identity_sealed() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_identity_sealed() TO brigade_recipes_sql, brigade_beer_sql;

-- Restrictive: ANDed with the owner policies, for the model roles only (the app's own queries are
-- unchanged). The sub-select makes it one check per statement, not one per row.
CREATE POLICY sealed_identity ON saved_recipes AS RESTRICTIVE TO brigade_recipes_sql
  USING ((SELECT brigade_identity_sealed())) WITH CHECK ((SELECT brigade_identity_sealed()));
CREATE POLICY sealed_identity ON beer.customers AS RESTRICTIVE TO brigade_beer_sql
  USING ((SELECT brigade_identity_sealed()));
CREATE POLICY sealed_identity ON beer.purchases AS RESTRICTIVE TO brigade_beer_sql
  USING ((SELECT brigade_identity_sealed()));
