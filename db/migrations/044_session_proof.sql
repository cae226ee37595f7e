-- Issue 42: a session cookie alone grants nothing. Cookies are scoped by host, not port, so any server on another
-- port of the API's host receives the cookie; the session is therefore bound to a proof that only the page that
-- signed in holds (handed to it once, in the sign-in redirect's URL fragment, which is never sent to a server).
-- Only the proof's digest is kept, beside the cookie's. A session made before this has no proof: it ends, and
-- its person signs in again.
DELETE FROM web_sessions;
ALTER TABLE web_sessions ADD COLUMN proof_digest bytea NOT NULL;

DROP FUNCTION brigade_session_start(bytea, text, text, text[], text, text, interval);
CREATE FUNCTION brigade_session_start(p_digest bytea, p_proof_digest bytea, p_user_id text, p_name text, p_roles text[], p_client text, p_id_token text, p_ttl interval) RETURNS void
  LANGUAGE sql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    DELETE FROM public.web_sessions WHERE expires_at < now() - interval '1 day';
    INSERT INTO public.web_sessions (digest, proof_digest, user_id, name, roles, client, id_token, expires_at)
      VALUES (p_digest, p_proof_digest, p_user_id, p_name, p_roles, p_client, p_id_token, now() + p_ttl);
  $$;
REVOKE EXECUTE ON FUNCTION brigade_session_start(bytea, bytea, text, text, text[], text, text, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_session_start(bytea, bytea, text, text, text[], text, text, interval) TO brigade_app;

-- A live session of an account that is not disabled, or no row. The proof's digest is answered, not matched
-- here, so the API compares it in constant time (and can tell a cookie without its proof from no session).
DROP FUNCTION brigade_session_principal(bytea);
CREATE FUNCTION brigade_session_principal(p_digest bytea) RETURNS TABLE (user_id text, name text, roles text[], client text, proof_digest bytea)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    SELECT s.user_id, s.name, s.roles, s.client, s.proof_digest FROM public.web_sessions s JOIN public.users u ON u.user_id = s.user_id
     WHERE s.digest = p_digest AND s.expires_at > now() AND u.disabled_at IS NULL
  $$;
REVOKE EXECUTE ON FUNCTION brigade_session_principal(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_session_principal(bytea) TO brigade_app;
