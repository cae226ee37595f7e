-- Issue 42: a personal key follows its owner's standing, and carries scopes.
--
-- Standing. An API_TOKENS user (iss 'urn:brigade:api-tokens') stands while the API's API_TOKENS holds them;
-- each API process, as it starts, tells PostgreSQL who that is (brigade_api_tokens_standing), so the users no
-- longer there are marked and their keys refuse on every API process at once (the check below runs per
-- request). The recorded roles shrink to the entry's and the bar follows it, so a role taken out of API_TOKENS
-- leaves the keys at the next start, not at the owner's next call (roles grow only when the token is used). A provider's people stand by their last sign-in, as before
-- (the unseen window), since nothing tells Brigade when a provider removes someone.
ALTER TABLE users ADD COLUMN standing_ended_at timestamptz;

-- Scopes. 'conversations' (the ordinary API: the owner's conversations and what the agents serve around them)
-- is every key's; 'keys' (make and revoke keys), 'erase' (DELETE /v1/me), 'export' (the whole person,
-- GET /v1/me/export) and 'operator' (operator routes, /codec) are granted only when asked for. Keys made before
-- this migration get the default alone.
ALTER TABLE api_keys
  ADD COLUMN scopes text[] NOT NULL DEFAULT '{conversations}'
    CHECK (scopes <@ '{conversations,keys,erase,export,operator}'::text[] AND 'conversations' = ANY (scopes)),
  -- a key made by a key (scope 'keys') goes when the key that made it is revoked
  ADD COLUMN made_by_key uuid REFERENCES api_keys (id) ON DELETE CASCADE;
CREATE INDEX api_keys_made_by ON api_keys (made_by_key) WHERE made_by_key IS NOT NULL;
GRANT SELECT (scopes, made_by_key) ON api_keys TO brigade_app;

-- Called by every API process as it starts, with its API_TOKENS grants as [{user, roles, client}]. Users of the
-- API_TOKENS issuer that are not among them lose their standing; those that are regain it, their recorded
-- roles cut to the entry's and their bar the entry's. Answers how many lost and how many regained standing now.
CREATE FUNCTION brigade_api_tokens_standing(p_grants jsonb, OUT ended integer, OUT restored integer)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
BEGIN
  WITH present AS (
    SELECT g ->> 'user' AS user_id,
           ARRAY(SELECT jsonb_array_elements_text(coalesce(g -> 'roles', '[]'::jsonb)) ORDER BY 1) AS roles,
           g ->> 'client' AS client
      FROM jsonb_array_elements(p_grants) g
  ), back AS (
    UPDATE public.users u
       SET roles = ARRAY(SELECT r FROM unnest(was.roles) r WHERE r = ANY (p.roles) ORDER BY r), client = p.client, standing_ended_at = NULL
      FROM present p, public.users was
     WHERE u.iss = 'urn:brigade:api-tokens' AND u.user_id = p.user_id AND was.user_id = u.user_id
    RETURNING was.standing_ended_at IS NOT NULL AS was_ended
  )
  SELECT count(*) FILTER (WHERE was_ended) INTO restored FROM back;
  UPDATE public.users SET standing_ended_at = now()
   WHERE iss = 'urn:brigade:api-tokens' AND standing_ended_at IS NULL
     AND user_id NOT IN (SELECT g ->> 'user' FROM jsonb_array_elements(p_grants) g);
  GET DIAGNOSTICS ended = ROW_COUNT;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_api_tokens_standing(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_api_tokens_standing(jsonb) TO brigade_app;

-- 033's check, with standing and scopes: a key whose owner's API_TOKENS entry is gone refuses; the unseen
-- window applies to a provider's people only (an API_TOKENS user's standing is the entry itself).
DROP FUNCTION brigade_api_key_principal(bytea, interval);
CREATE FUNCTION brigade_api_key_principal(p_digest bytea, p_unseen interval)
  RETURNS TABLE (key_id uuid, user_id text, roles text[], client text, scopes text[], refused text)
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
  scopes := k.scopes;
  roles := CASE WHEN k.roles IS NULL THEN u.roles
                ELSE ARRAY(SELECT r FROM unnest(k.roles) r WHERE r = ANY (u.roles) ORDER BY r) END;
  refused := CASE
    WHEN k.expires_at IS NOT NULL AND k.expires_at <= now() THEN 'the API key has expired'
    WHEN u.disabled_at IS NOT NULL THEN 'the API key''s owner is disabled'
    WHEN u.standing_ended_at IS NOT NULL THEN 'the API key''s owner is no longer in API_TOKENS'
    WHEN u.iss <> 'urn:brigade:api-tokens' AND u.last_seen_at < now() - p_unseen THEN 'the API key''s owner has not signed in for too long'
  END;
  IF refused IS NULL AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') THEN
    -- once a minute at most: a busy script should not turn every read into a write
    UPDATE public.api_keys SET last_used_at = now() WHERE id = k.id;
  END IF;
  RETURN NEXT;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_api_key_principal(bytea, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_api_key_principal(bytea, interval) TO brigade_app;
