-- Bounded context (issue 44): what a model step is sent of a long conversation is a summary of its older turns
-- plus its newest messages. The summary is a model's work, so it is kept: written once per last message it
-- folds (a retried or repeated compaction writes nothing twice, and branches that share that message may share
-- it), versioned per conversation. The transcript itself is never shortened: these rows are only what the
-- model reads instead of the messages up to through_seq.

CREATE TABLE conversation_summaries (
  conversation_id    uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id            text NOT NULL,
  through_message_id text NOT NULL,
  through_seq        bigint NOT NULL,
  version            integer NOT NULL,
  text               text NOT NULL,
  tokens             integer NOT NULL,
  model              text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, through_message_id)
);
CREATE INDEX conversation_summaries_latest ON conversation_summaries (conversation_id, through_seq DESC);

-- Written once, never changed, by the user's own transactions (row-level security as for messages).
GRANT SELECT, INSERT ON conversation_summaries TO brigade_app;
ALTER TABLE conversation_summaries ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON conversation_summaries
  USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());

-- What a model step does first, bounded: write what the workflow handed over, then read the latest summary (as a
-- first row of role 'summary': its text, through_message_id as id, version and tokens in args) and at most
-- p_limit of the newest messages after it, oldest first. A step reads O(window) rows, however long the
-- conversation; the person's transcript (readTranscript) stays whole.
CREATE FUNCTION brigade_write_batch_read_window(p_user text, p_conversation uuid, p_messages jsonb, p_events jsonb, p_limit integer)
  RETURNS TABLE (id text, role text, text text, tool_calls jsonb, call_id text, tool text, args jsonb, result jsonb, cards jsonb, structured jsonb, seq bigint)
  LANGUAGE plpgsql
  AS $$
DECLARE
  acting text := brigade_act_for(p_user);
  inserted text[];
  summary conversation_summaries%ROWTYPE;
  after_seq bigint := 0;
BEGIN
  IF jsonb_array_length(p_messages) > 0 OR jsonb_array_length(p_events) > 0 THEN
    inserted := brigade_write_batch(p_user, p_conversation, p_messages, p_events);
  END IF;
  SELECT * INTO summary FROM conversation_summaries AS s
   WHERE s.conversation_id = p_conversation ORDER BY s.through_seq DESC LIMIT 1;
  IF FOUND THEN
    after_seq := summary.through_seq;
    RETURN QUERY SELECT summary.through_message_id, 'summary'::text, summary.text, NULL::jsonb, NULL::text, NULL::text,
      jsonb_build_object('version', summary.version, 'tokens', summary.tokens), NULL::jsonb, NULL::jsonb, NULL::jsonb, summary.through_seq;
  END IF;
  RETURN QUERY
    SELECT w.* FROM (
      SELECT m.id, m.role, m.text, m.tool_calls, m.call_id, m.tool, m.args, m.result, m.cards, m.structured, m.seq
        FROM messages AS m
       WHERE m.conversation_id = p_conversation AND m.seq > after_seq
       ORDER BY m.seq DESC
       LIMIT p_limit
    ) AS w
    ORDER BY w.seq;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_write_batch_read_window(text, uuid, jsonb, jsonb, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_write_batch_read_window(text, uuid, jsonb, jsonb, integer) TO brigade_app;
