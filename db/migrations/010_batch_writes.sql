-- A step's writes in one round trip. Each function acts for the user it is given: it sets brigade.user_id
-- for the transaction it runs in (one statement's own, when called outside a transaction), so row-level
-- security applies as it does under asUser, without BEGIN, set_config and COMMIT costing three more round
-- trips. The functions run as their caller (SECURITY INVOKER): brigade_app, subject to row-level security.

-- Acts for p_user in this transaction (and returns it); one that already acts for someone (asUser) must act
-- for p_user.
CREATE FUNCTION brigade_act_for(p_user text) RETURNS text
  LANGUAGE plpgsql
  AS $$
DECLARE
  acting text := brigade_current_user();
BEGIN
  IF acting IS NULL THEN
    RETURN set_config('brigade.user_id', p_user, true);
  ELSIF acting IS DISTINCT FROM p_user THEN
    RAISE EXCEPTION 'this transaction acts for another user' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN acting;
END $$;

-- Writes, in one statement: the messages that are new (in order: their seq is the transcript's order); the
-- events, in order (their ids are the stream's order), those tagged with `of` only when the message they
-- belong to was new (a retry writes no event twice, and none for a message it did not write); a model
-- call's usage row; a tool call's record. Messages, events and usage are keyed and skip what exists; a tool
-- call's record is not: an attempt that ran the tool concurrently must fail and roll its effect back.
-- A conversation that is not the user's (row-level security hides it) is refused and nothing is written.
-- Returns the ids of the messages it inserted.
CREATE FUNCTION brigade_write_batch(
  p_user text,
  p_conversation uuid,
  p_messages jsonb,
  p_events jsonb,
  p_usage jsonb DEFAULT NULL,
  p_tool_call jsonb DEFAULT NULL
) RETURNS text[]
  LANGUAGE plpgsql
  AS $$
DECLARE
  acting text := brigade_act_for(p_user);
  inserted text[];
  visible boolean;
BEGIN
  WITH written AS (
    INSERT INTO messages (id, conversation_id, user_id, role, text, tool_calls, call_id, tool, args, result, cards, structured)
    SELECT m.item->>'id', p_conversation, p_user, m.item->>'role', m.item->>'text', m.item->'toolCalls', m.item->>'callId',
           m.item->>'tool', m.item->'args', m.item->'result', m.item->'cards', m.item->'structured'
      FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS m(item, n)
     ORDER BY m.n
    ON CONFLICT (conversation_id, id) DO NOTHING
    RETURNING messages.id
  ), logged AS (
    INSERT INTO events (conversation_id, user_id, key, type, data)
    SELECT p_conversation, p_user, e.item->>'key', e.item->>'type', e.item->'data'
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(item, n)
     WHERE NOT e.item ? 'of' OR e.item->>'of' IN (SELECT written.id FROM written)
     ORDER BY e.n
    ON CONFLICT (conversation_id, key) DO NOTHING
  ), counted AS (
    INSERT INTO model_usage (conversation_id, user_id, step_id, model, input_tokens, output_tokens, total_tokens)
    SELECT p_conversation, p_user, u->>'stepId', u->>'model', (u->>'inputTokens')::int, (u->>'outputTokens')::int, (u->>'totalTokens')::int
      FROM (SELECT p_usage AS u) AS given
     WHERE u IS NOT NULL
    ON CONFLICT DO NOTHING
  ), called AS (
    INSERT INTO tool_calls (conversation_id, user_id, call_id, tool, args, result)
    SELECT p_conversation, p_user, c->>'callId', c->>'tool', c->'args', c->'result'
      FROM (SELECT p_tool_call AS c) AS given
     WHERE c IS NOT NULL
  )
  SELECT coalesce(array_agg(written.id), '{}'), EXISTS (SELECT FROM conversations WHERE conversations.id = p_conversation)
    INTO inserted, visible
    FROM written;
  IF NOT visible THEN
    RAISE EXCEPTION 'conversation % is not one of this user''s', p_conversation USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN inserted;
END $$;

-- What a model step does first: write what the workflow handed over (if anything), then read the whole
-- transcript. Reading another user's conversation finds nothing, as everywhere under row-level security.
CREATE FUNCTION brigade_write_batch_read_transcript(p_user text, p_conversation uuid, p_messages jsonb, p_events jsonb)
  RETURNS TABLE (id text, role text, text text, tool_calls jsonb, call_id text, tool text, args jsonb, result jsonb, cards jsonb, structured jsonb)
  LANGUAGE plpgsql
  AS $$
DECLARE
  acting text := brigade_act_for(p_user);
  inserted text[];
BEGIN
  IF jsonb_array_length(p_messages) > 0 OR jsonb_array_length(p_events) > 0 THEN
    inserted := brigade_write_batch(p_user, p_conversation, p_messages, p_events);
  END IF;
  RETURN QUERY
    SELECT m.id, m.role, m.text, m.tool_calls, m.call_id, m.tool, m.args, m.result, m.cards, m.structured
      FROM messages AS m
     WHERE m.conversation_id = p_conversation
     ORDER BY m.seq;
END $$;

-- What a tool call does first, in the transaction that will hold its effect: act for the user, make sure the
-- conversation is theirs before the tool acts, and find the call's record if an earlier attempt left one.
CREATE FUNCTION brigade_tool_call_result(p_user text, p_conversation uuid, p_call_id text)
  RETURNS TABLE (result jsonb)
  LANGUAGE plpgsql
  AS $$
DECLARE
  acting text := brigade_act_for(p_user);
  visible boolean;
  earlier jsonb;
BEGIN
  -- tool_calls.result is NOT NULL (a JSON null is stored as 'null'), so NULL here means no record.
  SELECT EXISTS (SELECT FROM conversations WHERE conversations.id = p_conversation),
         (SELECT t.result FROM tool_calls AS t WHERE t.conversation_id = p_conversation AND t.call_id = p_call_id)
    INTO visible, earlier;
  IF NOT visible THEN
    RAISE EXCEPTION 'conversation % is not one of this user''s', p_conversation USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF earlier IS NOT NULL THEN
    result := earlier;
    RETURN NEXT;
  END IF;
END $$;

REVOKE EXECUTE ON FUNCTION brigade_act_for(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION brigade_write_batch(text, uuid, jsonb, jsonb, jsonb, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION brigade_write_batch_read_transcript(text, uuid, jsonb, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION brigade_tool_call_result(text, uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_act_for(text) TO brigade_app;
GRANT EXECUTE ON FUNCTION brigade_write_batch(text, uuid, jsonb, jsonb, jsonb, jsonb) TO brigade_app;
GRANT EXECUTE ON FUNCTION brigade_write_batch_read_transcript(text, uuid, jsonb, jsonb) TO brigade_app;
GRANT EXECUTE ON FUNCTION brigade_tool_call_result(text, uuid, text) TO brigade_app;
