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
