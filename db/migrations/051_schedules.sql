-- Issue 48: agents on a schedule. A person's schedule is a row here (what to send, to which agent, where) and a
-- Temporal Schedule of the same id (when; src/schedules/temporal-schedule.ts). The rows are the person's alone
-- under row-level security, so listing one person's schedules reads their rows only; the text is kept here, not
-- in Temporal, so erasing the rows (and the Temporal Schedules) leaves nothing of it behind.
CREATE TABLE schedules (
  id              uuid PRIMARY KEY,
  user_id         text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
  agent           text NOT NULL,
  text            text NOT NULL,
  -- exactly one of: an interval, or a cron expression (Temporal's)
  every_ms        bigint CHECK (every_ms > 0),
  cron            text,
  -- none: each run starts a conversation of its own
  conversation_id uuid,
  paused          boolean NOT NULL DEFAULT false,
  -- why the schedule paused itself (its owner disabled, gone or without the agent's role); none when the person paused it
  paused_reason   text,
  -- the latest run: {at, outcome, conversationId?, reason?}
  last_run        jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((every_ms IS NULL) <> (cron IS NULL))
);
CREATE INDEX schedules_owner ON schedules (user_id, created_at);

ALTER TABLE schedules ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON schedules USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
GRANT SELECT, INSERT, UPDATE, DELETE ON schedules TO brigade_app;
-- a schedule made while its owner's erasure runs is refused, like a new conversation (043_erasure_fence.sql)
CREATE TRIGGER erasure_fence BEFORE INSERT ON schedules FOR EACH ROW EXECUTE FUNCTION brigade_fence_request();

-- A run of schedule p_id, from the worker, which does not know whose it is: the schedule and its owner's standing
-- as a personal API key would see it (042_api_key_standing_and_scopes.sql): their recorded roles and client, and
-- `refused` saying why they may not act now. No row: no such schedule (deleted meanwhile).
CREATE FUNCTION brigade_schedule_for_run(p_id uuid, p_unseen interval)
  RETURNS TABLE (user_id text, agent text, text text, conversation_id uuid, paused boolean, roles text[], client text, refused text)
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  s public.schedules;
  u public.users;
BEGIN
  SELECT * INTO s FROM public.schedules WHERE id = p_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO u FROM public.users WHERE users.user_id = s.user_id;
  user_id := s.user_id;
  agent := s.agent;
  text := s.text;
  conversation_id := s.conversation_id;
  paused := s.paused;
  roles := coalesce(u.roles, '{}');
  client := u.client;
  refused := CASE
    WHEN u.user_id IS NULL THEN 'its owner''s account is gone'
    WHEN u.disabled_at IS NOT NULL THEN 'its owner is disabled'
    WHEN u.standing_ended_at IS NOT NULL THEN 'its owner is no longer in API_TOKENS'
    WHEN u.iss <> 'urn:brigade:api-tokens' AND u.last_seen_at < now() - p_unseen THEN 'its owner has not signed in for too long'
  END;
  RETURN NEXT;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_schedule_for_run(uuid, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_schedule_for_run(uuid, interval) TO brigade_app;
