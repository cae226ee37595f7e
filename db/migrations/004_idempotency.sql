-- Idempotency keys: a POST retried with the same Idempotency-Key gets its first outcome, and a key reused
-- with a different body is refused (422) instead of silently answering for the first request.
-- scope: 'create' (POST /v1/conversations) or 'conversation:<id>' (its messages and decisions, which share
-- the workflow's update ids). request_hash: SHA-256 of the route and the canonical JSON of the validated
-- body. response: the answer to replay, once there is one.
CREATE TABLE idempotency_keys (
  user_id      text NOT NULL,
  scope        text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  status       integer,
  response     jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, scope, key)
);

-- The app records keys and fills in the outcome; it never deletes one.
GRANT SELECT, INSERT, UPDATE ON idempotency_keys TO brigade_app;

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON idempotency_keys USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
