-- Issue 34: people from an OpenID provider and the personal API keys they make for scripts.
-- A person is keyed by (iss, sub), never by e-mail or name, which providers let change hands. The user_id that
-- rows everywhere carry is a name for API_TOKENS users (iss 'urn:brigade:api-tokens', as before) and
-- 'oidc:<digest of iss and sub>' for a provider's people, so no subject can ever become a token user.
-- brigade_app reads neither table whole: it identifies callers through the SECURITY DEFINER functions
-- below, which take a key's digest and answer for that key alone, and it sees its own keys under RLS.
CREATE TABLE users (
  user_id       text PRIMARY KEY,
  iss           text NOT NULL,
  sub           text NOT NULL,
  roles         text[] NOT NULL DEFAULT '{}',
  client        text,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  disabled_at   timestamptz,
  UNIQUE (iss, sub)
);

-- The key itself is never stored: 32 random bytes need no slow hash, and a digest cannot be used to sign in.
CREATE TABLE api_keys (
  id           uuid PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
  name         text NOT NULL,
  key_digest   bytea NOT NULL UNIQUE,
  -- null: whatever roles the owner holds when the key is used
  roles        text[],
  expires_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX api_keys_owner ON api_keys (user_id, created_at);

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON api_keys USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
-- key_digest is written once and read by nobody but brigade_api_key_principal
GRANT SELECT (id, user_id, name, roles, expires_at, created_at, last_used_at), INSERT, DELETE ON api_keys TO brigade_app;

-- A caller seen now: records the roles and bar it came with and answers whether the account is disabled.
CREATE FUNCTION brigade_user_seen(p_user_id text, p_iss text, p_sub text, p_roles text[], p_client text) RETURNS boolean
  LANGUAGE sql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    INSERT INTO public.users AS u (user_id, iss, sub, roles, client) VALUES (p_user_id, p_iss, p_sub, p_roles, p_client)
    ON CONFLICT (iss, sub) DO UPDATE SET roles = excluded.roles, client = excluded.client, last_seen_at = now()
    RETURNING u.disabled_at IS NOT NULL
  $$;
REVOKE EXECUTE ON FUNCTION brigade_user_seen(text, text, text, text[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_user_seen(text, text, text, text[], text) TO brigade_app;

-- Who an API key acts as, read on every request so that a deleted key, an expired one, a disabled owner or one
-- not seen for p_unseen stops at once in every API process. Roles are the smaller of the key's and the owner's
-- last seen. `refused` says why a known key is refused; no row: no such key.
CREATE FUNCTION brigade_api_key_principal(p_digest bytea, p_unseen interval)
  RETURNS TABLE (key_id uuid, user_id text, roles text[], client text, refused text)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  k public.api_keys;
  u public.users;
BEGIN
  SELECT * INTO k FROM public.api_keys WHERE key_digest = p_digest;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO u FROM public.users WHERE users.user_id = k.user_id;
  key_id := k.id;
  user_id := k.user_id;
  client := u.client;
  roles := CASE WHEN k.roles IS NULL THEN u.roles
                ELSE ARRAY(SELECT r FROM unnest(k.roles) r WHERE r = ANY (u.roles) ORDER BY r) END;
  refused := CASE
    WHEN k.expires_at IS NOT NULL AND k.expires_at <= now() THEN 'the API key has expired'
    WHEN u.disabled_at IS NOT NULL THEN 'the API key''s owner is disabled'
    WHEN u.last_seen_at < now() - p_unseen THEN 'the API key''s owner has not signed in for too long'
  END;
  IF refused IS NULL AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') THEN
    -- once a minute at most: a busy script should not turn every read into a write
    UPDATE public.api_keys SET last_used_at = now() WHERE id = k.id;
  END IF;
  RETURN NEXT;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_api_key_principal(bytea, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_api_key_principal(bytea, interval) TO brigade_app;

-- The owner's roles now, for checking the roles a new key asks for.
CREATE FUNCTION brigade_user_roles(p_user_id text) RETURNS text[]
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$ SELECT roles FROM public.users WHERE user_id = p_user_id AND p_user_id = public.brigade_current_user() $$;
REVOKE EXECUTE ON FUNCTION brigade_user_roles(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_user_roles(text) TO brigade_app;
