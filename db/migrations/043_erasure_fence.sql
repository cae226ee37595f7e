-- Erasure is final (issue 42): the person is fenced before anything of theirs is deleted, so that a write
-- already in flight (a model call's settlement 3 s after the 204, a title, a request that signed in a moment
-- before) cannot put them back. The rule, checked by the database in the statement that writes:
--   * while an erasure of the user runs (fenced, not yet erased), nothing of theirs is written: ledger rows
--     are dropped, and new conversations, idempotency keys, rate windows, stream leases and sign-in records
--     are refused;
--   * once it has finished, the person may start afresh (a new sign-in, new conversations), but a ledger row
--     is kept only for a conversation of theirs that exists now: a settlement of a call made for a
--     conversation the erasure removed is dropped, however late it comes. Messages, events, tool calls and
--     per-step usage need no check: their foreign key to conversations already refuses them.
-- The fence names nobody in plain: it holds the SHA-256 of the user id (a guessable id is guessable from
-- its digest too; it tells no more than that the id was erased) and when. It is kept: a late settlement
-- may come long after the erasure (a worker that was partitioned), and the row is 56 bytes.
CREATE TABLE erased_users (
  user_digest bytea PRIMARY KEY,
  fenced_at   timestamptz NOT NULL,
  -- null while the erasure runs (or after one that failed halfway, until a retry finishes it)
  erased_at   timestamptz
);
REVOKE ALL ON erased_users FROM PUBLIC;

-- The digest the fence and Temporal's BrigadeUserDigest search attribute use (src/protection/user-digest.ts).
-- Qualified names instead of a fixed search_path, so that PostgreSQL can inline it.
CREATE FUNCTION brigade_user_digest(p_user text) RETURNS bytea
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT pg_catalog.sha256(pg_catalog.convert_to(p_user, 'UTF8')) $$;

-- Whether a write of p_user's must not happen. Writers take the user's fence lock shared (held to the end
-- of their transaction) before they look, and the fence takes it exclusively: a write that started before
-- the fence has committed before the fence does (so the erasure's deletes see it), and one after it sees
-- the fence (each statement of a volatile function reads after the lock it waited for). Internal.
CREATE FUNCTION brigade_fenced(p_user text, p_conversation uuid, p_bound boolean) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  fence public.erased_users;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('brigade.fence:' || p_user, 0));
  SELECT * INTO fence FROM public.erased_users WHERE user_digest = public.brigade_user_digest(p_user);
  IF NOT FOUND THEN
    RETURN false;
  ELSIF fence.erased_at IS NULL THEN
    RETURN true;
  ELSIF NOT p_bound THEN
    RETURN false;
  END IF;
  RETURN p_conversation IS NULL
      OR NOT EXISTS (SELECT FROM public.conversations AS c WHERE c.id = p_conversation AND c.user_id = p_user);
END $$;
REVOKE EXECUTE ON FUNCTION brigade_fenced(text, uuid, boolean) FROM PUBLIC;
-- the triggers below run as the writer (a SECURITY DEFINER trigger with a fixed search_path cost about
-- 0.1 ms more per row); what this tells the app is only whether a user id's erasure runs
GRANT EXECUTE ON FUNCTION brigade_fenced(text, uuid, boolean) TO brigade_app;

-- Raises the fence, as the first step of an erasure, in a transaction of its own that commits before any
-- delete. A second erasure of the same user raises it again.
CREATE FUNCTION brigade_fence_person(p_user text) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('brigade.fence:' || acting, 0));
  INSERT INTO public.erased_users (user_digest, fenced_at) VALUES (public.brigade_user_digest(acting), clock_timestamp())
  ON CONFLICT (user_digest) DO UPDATE SET fenced_at = excluded.fenced_at, erased_at = NULL;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_fence_person(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_fence_person(text) TO brigade_app;

-- The erasure's last step: everything is gone, so the person may start afresh (see the rule above).
CREATE FUNCTION brigade_person_erased(p_user text) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
BEGIN
  UPDATE public.erased_users SET erased_at = clock_timestamp() WHERE user_digest = public.brigade_user_digest(acting);
END $$;
REVOKE EXECUTE ON FUNCTION brigade_person_erased(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_person_erased(text) TO brigade_app;

-- The ledger's rows (reservations and settlements, through 028's functions or any other way) are dropped
-- silently: a call's bookkeeping never fails the call, and a fenced person's call has nothing to book.
-- Returning NULL from a BEFORE trigger skips the row, the ON CONFLICT DO UPDATE of a settlement with it.
CREATE FUNCTION brigade_fence_ledger() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF public.brigade_fenced(NEW.user_id, NEW.conversation_id, true) THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER erasure_fence BEFORE INSERT ON usage_ledger FOR EACH ROW EXECUTE FUNCTION brigade_fence_ledger();

-- What a request writes for its caller (a new conversation, an idempotency key, a rate window, a stream
-- lease) is refused while the caller's erasure runs: the request fails rather than leaving a row the
-- erasure has already passed. After it, these are the person's new data.
CREATE FUNCTION brigade_fence_request() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF public.brigade_fenced(NEW.user_id, NULL, false) THEN
    RAISE EXCEPTION 'this user''s data is being erased' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER erasure_fence BEFORE INSERT ON conversations FOR EACH ROW EXECUTE FUNCTION brigade_fence_request();
CREATE TRIGGER erasure_fence BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION brigade_fence_request();
CREATE TRIGGER erasure_fence BEFORE INSERT ON user_rate_windows FOR EACH ROW EXECUTE FUNCTION brigade_fence_request();
CREATE TRIGGER erasure_fence BEFORE INSERT ON user_event_streams FOR EACH ROW EXECUTE FUNCTION brigade_fence_request();

-- A caller seen now (033), except while their erasure runs: then no users row is made again from a token
-- still in flight, and the caller is answered as disabled (refused).
CREATE OR REPLACE FUNCTION brigade_user_seen(p_user_id text, p_iss text, p_sub text, p_roles text[], p_client text) RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  disabled boolean;
BEGIN
  IF public.brigade_fenced(p_user_id, NULL, false) THEN
    RETURN true;
  END IF;
  INSERT INTO public.users AS u (user_id, iss, sub, roles, client) VALUES (p_user_id, p_iss, p_sub, p_roles, p_client)
  ON CONFLICT (iss, sub) DO UPDATE SET roles = excluded.roles, client = excluded.client, last_seen_at = now()
  RETURNING u.disabled_at IS NOT NULL INTO disabled;
  RETURN disabled;
END $$;
