-- The conversation runtime: conversations, their transcript, the append-only event log, model usage
-- and the record of tool calls that makes a retried tool a no-op.
-- The app runs as brigade_app: DML only, and row-level security keyed on brigade.user_id, which
-- the app sets per transaction (set_config(..., true)).

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'brigade_app') THEN
    CREATE ROLE brigade_app NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
  END IF;
END $$;

-- The login that runs migrations must be able to SET ROLE to brigade_app.
DO $$
BEGIN
  EXECUTE format('GRANT brigade_app TO %I', current_user);
EXCEPTION WHEN others THEN
  -- already a member, or a superuser (who needs no membership)
  NULL;
END $$;

GRANT USAGE ON SCHEMA public TO brigade_app;

CREATE FUNCTION brigade_current_user() RETURNS text
  LANGUAGE sql STABLE
  AS $$ SELECT nullif(current_setting('brigade.user_id', true), '') $$;

CREATE TABLE conversations (
  id          uuid PRIMARY KEY,
  user_id     text NOT NULL,
  agent       text NOT NULL CHECK (agent IN ('recipes', 'sous', 'beer', 'support')),
  client      text,
  title       text NOT NULL,
  workflow_id text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_user ON conversations (user_id, created_at DESC);

CREATE TABLE messages (
  id              text NOT NULL,
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id         text NOT NULL,
  seq             bigserial,
  role            text NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  text            text NOT NULL,
  tool_calls      jsonb,
  call_id         text,
  tool            text,
  args            jsonb,
  result          jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, id)
);
CREATE INDEX messages_transcript ON messages (conversation_id, seq);

CREATE TABLE events (
  id              bigserial PRIMARY KEY,
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id         text NOT NULL,
  key             text NOT NULL,
  type            text NOT NULL,
  data            jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (conversation_id, key)
);
CREATE INDEX events_tail ON events (conversation_id, id);

-- One row per model call, keyed by the step that made it, so a retried activity counts once.
CREATE TABLE model_usage (
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id         text NOT NULL,
  step_id         text NOT NULL,
  model           text NOT NULL,
  input_tokens    integer NOT NULL,
  output_tokens   integer NOT NULL,
  total_tokens    integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, step_id)
);

-- A tool's effect and this row commit in one transaction: a retry finds the row and returns its result.
CREATE TABLE tool_calls (
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id         text NOT NULL,
  call_id         text NOT NULL,
  tool            text NOT NULL,
  args            jsonb NOT NULL,
  result          jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, call_id)
);

-- Events wake API subscribers; the payload names only the conversation, never content.
CREATE FUNCTION notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('brigade_events', NEW.conversation_id::text);
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION notify_event();

-- Append-only for the app: no UPDATE or DELETE on events, messages are written once.
GRANT SELECT, INSERT ON conversations, messages, events, model_usage, tool_calls TO brigade_app;
GRANT USAGE ON SEQUENCE messages_seq_seq, events_id_seq TO brigade_app;

ALTER TABLE conversations ENABLE ROW LEVEL SECURITY;
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE events ENABLE ROW LEVEL SECURITY;
ALTER TABLE model_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE tool_calls ENABLE ROW LEVEL SECURITY;

CREATE POLICY own_rows ON conversations USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
CREATE POLICY own_rows ON messages USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
CREATE POLICY own_rows ON events USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
CREATE POLICY own_rows ON model_usage USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
CREATE POLICY own_rows ON tool_calls USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
