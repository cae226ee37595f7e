-- Per-user limits (issue 29): new conversations and turns per minute, and event streams open at once. They
-- live here, not in a process's memory, so that every API process counts against the same numbers.
--
-- user_rate_windows: one row per user, kind ('conversations', 'turns') and minute; a request adds one with
-- INSERT ... ON CONFLICT DO UPDATE, which is atomic across processes, and is refused past the limit.
-- A deleted conversation changes nothing here.
CREATE TABLE user_rate_windows (
  user_id      text NOT NULL,
  kind         text NOT NULL,
  window_start timestamptz NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (user_id, kind, window_start)
);

-- user_event_streams: a lease per open event stream, renewed while it is open and deleted when it closes;
-- a process that dies leaves leases that expire on their own. A user's leases are counted under a
-- transaction-scoped advisory lock on the user, so two processes cannot both take the last one.
CREATE TABLE user_event_streams (
  id         uuid PRIMARY KEY,
  user_id    text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX user_event_streams_user ON user_event_streams (user_id, expires_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON user_rate_windows, user_event_streams TO brigade_app;

ALTER TABLE user_rate_windows ENABLE ROW LEVEL SECURITY;
ALTER TABLE user_event_streams ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON user_rate_windows USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
CREATE POLICY own_rows ON user_event_streams USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());

-- Old minutes and expired leases of every user go, not only the caller's (row-level security would show the
-- app only its user's): an inactive user's last counts do not stay behind. The app calls it now and then.
CREATE FUNCTION brigade_prune_user_limits() RETURNS void
  LANGUAGE sql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
  DELETE FROM public.user_rate_windows WHERE window_start < date_trunc('minute', now()) - interval '1 minute';
  DELETE FROM public.user_event_streams WHERE expires_at < now();
$$;
REVOKE EXECUTE ON FUNCTION brigade_prune_user_limits() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_prune_user_limits() TO brigade_app;
