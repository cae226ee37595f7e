-- Deleting a conversation (issue 22): DELETE /v1/conversations/{id} erases its transcript, events, model
-- usage, tool calls and idempotency keys. The app stays append-only on those tables (no DELETE grant): it
-- may only remove a whole conversation of the user it acts for, through this one function. The function
-- runs as its owner (SECURITY DEFINER) so the cascade needs no grant, and checks the owner itself: it acts
-- for p_user (brigade_act_for, as the batch writes do) and deletes only p_user's row. A saved recipe made in
-- the conversation is the user's and stays; its conversation_id becomes NULL (ON DELETE SET NULL).
-- Streams of the conversation are woken (brigade_events) so they see it is gone and close.
CREATE FUNCTION brigade_delete_conversation(p_user text, p_conversation uuid) RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
  gone integer;
BEGIN
  DELETE FROM public.conversations WHERE id = p_conversation AND user_id = acting;
  GET DIAGNOSTICS gone = ROW_COUNT;
  IF gone = 0 THEN
    RETURN false;
  END IF;
  -- messages, events, model_usage and tool_calls go with it (ON DELETE CASCADE); keys name it by scope or
  -- in the create call's recorded answer
  DELETE FROM public.idempotency_keys
   WHERE user_id = acting
     AND (scope = 'conversation:' || p_conversation::text OR (scope = 'create' AND response->>'id' = p_conversation::text));
  PERFORM pg_notify('brigade_events', p_conversation::text);
  RETURN true;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_delete_conversation(text, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_delete_conversation(text, uuid) TO brigade_app;

-- Token budgets: a model step sums what its user spent today (UTC) before it asks the model; the user leads
-- the index, as row-level security reads only their rows anyway.
CREATE INDEX model_usage_user_day ON model_usage (user_id, created_at);
