-- Crypto-shredding (issue 42): each person's payloads are sealed under a data key of their own (random 256-bit),
-- kept here wrapped (AES-256-GCM) by the deployment key `wrapping_key_id` names. Erasure deletes the row first:
-- whatever of theirs stays sealed anywhere (the history file's free pages, its WAL, a cluster's Temporal
-- database, backups) can then no longer be opened by anyone holding every deployment key.
-- The app has no rights on the table itself: it reads, adds, re-wraps and erases through the functions below,
-- which run as their owner. Reading a wrapped key gives nothing without a deployment key, which the app has anyway.
CREATE TABLE person_data_keys (
  user_id         text PRIMARY KEY,
  -- what sealed payloads name (encryption-key-id): random, never the user id (which may be an e-mail address)
  key_id          text NOT NULL UNIQUE CHECK (key_id ~ '^person:[0-9a-f-]{36}$'),
  wrapping_key_id text NOT NULL,
  -- iv (12) || AES-256-GCM(data key) (32) || tag (16), associated data: user id, NUL, key id
  wrapped         bytea NOT NULL CHECK (length(wrapped) = 60),
  created_at      timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE person_data_keys ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON person_data_keys FROM PUBLIC;

-- A conversation's child workflows (its tools that run as workflows: the save pipeline, a recommendation) have
-- random ids: the codec notes each one's conversation when it seals the child's input, so the child's payloads,
-- on any worker, are its person's too. They go with the conversation.
CREATE TABLE conversation_child_workflows (
  workflow_id              text PRIMARY KEY,
  conversation_workflow_id text NOT NULL REFERENCES conversations (workflow_id) ON DELETE CASCADE,
  created_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversation_child_workflows_parent ON conversation_child_workflows (conversation_workflow_id);
ALTER TABLE conversation_child_workflows ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON conversation_child_workflows FROM PUBLIC;

CREATE FUNCTION brigade_note_child_workflow(p_workflow_id text, p_parent_workflow_id text) RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
BEGIN
  INSERT INTO public.conversation_child_workflows (workflow_id, conversation_workflow_id)
  SELECT p_workflow_id, c.workflow_id FROM public.conversations c WHERE c.workflow_id = p_parent_workflow_id
  ON CONFLICT (workflow_id) DO NOTHING;
  RETURN FOUND;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_note_child_workflow(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_note_child_workflow(text, text) TO brigade_app;

-- The data key of the person whose conversation runs as p_workflow_id (or has it as a child): the owner alone
-- when they have no key yet (the caller makes one), nothing for a workflow no conversation names (system
-- workflows keep the deployment key).
CREATE FUNCTION brigade_data_key_of_workflow(p_workflow_id text)
  RETURNS TABLE (user_id text, key_id text, wrapping_key_id text, wrapped bytea)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    SELECT c.user_id, k.key_id, k.wrapping_key_id, k.wrapped
      FROM public.conversations c LEFT JOIN public.person_data_keys k ON k.user_id = c.user_id
     WHERE c.workflow_id = coalesce(
             (SELECT w.conversation_workflow_id FROM public.conversation_child_workflows w WHERE w.workflow_id = p_workflow_id),
             p_workflow_id)
  $$;
REVOKE EXECUTE ON FUNCTION brigade_data_key_of_workflow(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_data_key_of_workflow(text) TO brigade_app;

-- A data key by the id a sealed payload names (decoding needs no owner); nothing once it was erased.
CREATE FUNCTION brigade_data_key(p_key_id text)
  RETURNS TABLE (user_id text, wrapping_key_id text, wrapped bytea)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$ SELECT k.user_id, k.wrapping_key_id, k.wrapped FROM public.person_data_keys k WHERE k.key_id = p_key_id $$;
REVOKE EXECUTE ON FUNCTION brigade_data_key(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_data_key(text) TO brigade_app;

-- Adds p_user's data key unless one exists (two processes may make one at once: the first wins); returns the one kept.
CREATE FUNCTION brigade_add_data_key(p_user text, p_key_id text, p_wrapping_key_id text, p_wrapped bytea)
  RETURNS TABLE (key_id text, wrapping_key_id text, wrapped bytea)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
BEGIN
  INSERT INTO public.person_data_keys (user_id, key_id, wrapping_key_id, wrapped)
  VALUES (p_user, p_key_id, p_wrapping_key_id, p_wrapped)
  ON CONFLICT (user_id) DO NOTHING;
  RETURN QUERY SELECT k.key_id, k.wrapping_key_id, k.wrapped FROM public.person_data_keys k WHERE k.user_id = p_user;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_add_data_key(text, text, text, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_add_data_key(text, text, text, bytea) TO brigade_app;

-- Rotation of the deployment keys: the data keys not wrapped by p_current (a page of them), and the re-wrap of
-- one, which applies only if it is still wrapped as read (a concurrent re-wrap or erasure wins).
CREATE FUNCTION brigade_data_keys_to_rewrap(p_current text, p_limit integer)
  RETURNS TABLE (user_id text, key_id text, wrapping_key_id text, wrapped bytea)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    SELECT k.user_id, k.key_id, k.wrapping_key_id, k.wrapped FROM public.person_data_keys k
     WHERE k.wrapping_key_id <> p_current ORDER BY k.key_id LIMIT p_limit
  $$;
REVOKE EXECUTE ON FUNCTION brigade_data_keys_to_rewrap(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_data_keys_to_rewrap(text, integer) TO brigade_app;

CREATE FUNCTION brigade_rewrap_data_key(p_key_id text, p_from text, p_wrapping_key_id text, p_wrapped bytea) RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
BEGIN
  UPDATE public.person_data_keys SET wrapping_key_id = p_wrapping_key_id, wrapped = p_wrapped
   WHERE key_id = p_key_id AND wrapping_key_id = p_from;
  RETURN FOUND;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_rewrap_data_key(text, text, text, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_rewrap_data_key(text, text, text, bytea) TO brigade_app;

-- Erasure's first step: p_user's data key goes (only the user the transaction acts for). Processes that cached
-- it unwrapped drop it within their cache's lifetime (60 s, src/protection/person-keys.ts). Returns 0 or 1.
CREATE FUNCTION brigade_erase_data_key(p_user text) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
  gone integer;
BEGIN
  DELETE FROM public.person_data_keys WHERE user_id = acting;
  GET DIAGNOSTICS gone = ROW_COUNT;
  RETURN gone;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_erase_data_key(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_erase_data_key(text) TO brigade_app;

-- After an erasure the app rewrites the tables that held the person's rows (VACUUM FULL), so that their dead
-- tuples leave the table files. VACUUM needs the table's owner or, from PostgreSQL 17, the MAINTAIN privilege:
-- granted here on every table with a user_id column, and by default on the tables later migrations make. On an
-- older server the app cannot, and says so in its log (docs/security.md: run it as the owner).
DO $$
DECLARE
  t record;
BEGIN
  IF current_setting('server_version_num')::integer < 170000 THEN
    RETURN;
  END IF;
  FOR t IN
    SELECT c.oid::regclass AS rel FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'user_id' AND NOT a.attisdropped
     WHERE n.nspname = 'public' AND c.relkind = 'r'
  LOOP
    EXECUTE format('GRANT MAINTAIN ON TABLE %s TO brigade_app', t.rel);
  END LOOP;
  EXECUTE 'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT MAINTAIN ON TABLES TO brigade_app';
END $$;
