-- Issue 34: the web client's sign-in sessions (an HttpOnly cookie holds the session's secret). In PostgreSQL
-- so that every API process knows them and sign-out ends one everywhere at once. Only the secret's digest is
-- kept. The ID token is kept for the provider's end_session (id_token_hint) and nothing else.
CREATE TABLE web_sessions (
  digest     bytea PRIMARY KEY,
  user_id    text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
  name       text,
  roles      text[] NOT NULL DEFAULT '{}',
  client     text,
  id_token   text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX web_sessions_owner ON web_sessions (user_id);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

-- brigade_app has no direct access: a session is reached only by its digest, through these functions.
CREATE FUNCTION brigade_session_start(p_digest bytea, p_user_id text, p_name text, p_roles text[], p_client text, p_id_token text, p_ttl interval) RETURNS void
  LANGUAGE sql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    DELETE FROM public.web_sessions WHERE expires_at < now() - interval '1 day';
    INSERT INTO public.web_sessions (digest, user_id, name, roles, client, id_token, expires_at)
      VALUES (p_digest, p_user_id, p_name, p_roles, p_client, p_id_token, now() + p_ttl);
  $$;
REVOKE EXECUTE ON FUNCTION brigade_session_start(bytea, text, text, text[], text, text, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_session_start(bytea, text, text, text[], text, text, interval) TO brigade_app;

-- A live session of an account that is not disabled, or no row.
CREATE FUNCTION brigade_session_principal(p_digest bytea) RETURNS TABLE (user_id text, name text, roles text[], client text)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    SELECT s.user_id, s.name, s.roles, s.client FROM public.web_sessions s JOIN public.users u ON u.user_id = s.user_id
     WHERE s.digest = p_digest AND s.expires_at > now() AND u.disabled_at IS NULL
  $$;
REVOKE EXECUTE ON FUNCTION brigade_session_principal(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_session_principal(bytea) TO brigade_app;

-- Ends a session; answers its ID token for the provider's sign-out.
CREATE FUNCTION brigade_session_end(p_digest bytea) RETURNS text
  LANGUAGE sql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$ DELETE FROM public.web_sessions WHERE digest = p_digest RETURNING id_token $$;
REVOKE EXECUTE ON FUNCTION brigade_session_end(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_session_end(bytea) TO brigade_app;
