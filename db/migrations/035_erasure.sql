-- Erasure of a person (issue 35): DELETE /v1/me and the operator's DELETE /v1/users/{user} erase everything
-- of one user. The app stays append-only on the runtime's tables (no DELETE grant): it erases through these
-- functions, which run as their owner (SECURITY DEFINER), act for p_user (brigade_act_for, so a transaction
-- that acts for someone else is refused) and touch only p_user's rows.
--
-- Budgets keep anonymous totals: before a usage row goes (with its conversation, with its person, or past
-- RETENTION_USAGE) its tokens are added to usage_totals, per UTC day and model, with no user and no
-- conversation. Nothing there names a person; the app cannot read or write it (operators query it as owner).
CREATE TABLE usage_totals (
  day           date NOT NULL,
  model         text NOT NULL,
  calls         bigint NOT NULL,
  input_tokens  bigint NOT NULL,
  output_tokens bigint NOT NULL,
  total_tokens  bigint NOT NULL,
  PRIMARY KEY (day, model)
);
REVOKE ALL ON usage_totals FROM PUBLIC;

-- Folds the usage rows a query selects into usage_totals and deletes them. Internal: not granted to the app.
CREATE FUNCTION brigade_fold_usage(p_user text, p_conversation uuid, p_before timestamptz) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  folded integer;
BEGIN
  WITH gone AS (
    DELETE FROM public.model_usage
     WHERE (p_user IS NULL OR user_id = p_user)
       AND (p_conversation IS NULL OR conversation_id = p_conversation)
       AND (p_before IS NULL OR created_at < p_before)
    RETURNING created_at, model, input_tokens, output_tokens, total_tokens
  ), sums AS (
    SELECT (created_at AT TIME ZONE 'UTC')::date AS day, model, count(*) AS calls, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(total_tokens) AS t
      FROM gone GROUP BY 1, 2
  ), added AS (
    INSERT INTO public.usage_totals AS u (day, model, calls, input_tokens, output_tokens, total_tokens)
    SELECT day, model, calls, i, o, t FROM sums
    ON CONFLICT (day, model) DO UPDATE
      SET calls = u.calls + excluded.calls, input_tokens = u.input_tokens + excluded.input_tokens,
          output_tokens = u.output_tokens + excluded.output_tokens, total_tokens = u.total_tokens + excluded.total_tokens
    RETURNING calls
  )
  SELECT coalesce(sum(calls), 0) INTO folded FROM added;
  RETURN folded;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_fold_usage(text, uuid, timestamptz) FROM PUBLIC;

-- Deleting a conversation (018) now keeps its usage as anonymous totals first; otherwise as before.
CREATE OR REPLACE FUNCTION brigade_delete_conversation(p_user text, p_conversation uuid) RETURNS boolean
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
  gone integer;
BEGIN
  PERFORM public.brigade_fold_usage(acting, p_conversation, NULL);
  DELETE FROM public.conversations WHERE id = p_conversation AND user_id = acting;
  GET DIAGNOSTICS gone = ROW_COUNT;
  IF gone = 0 THEN
    RETURN false;
  END IF;
  DELETE FROM public.idempotency_keys
   WHERE user_id = acting
     AND (scope = 'conversation:' || p_conversation::text OR (scope = 'create' AND response->>'id' = p_conversation::text));
  PERFORM pg_notify('brigade_events', p_conversation::text);
  RETURN true;
END $$;

-- Every row of the runtime's tables that is p_user's: conversations (their messages, events, tool calls go
-- with them), usage (folded first), idempotency keys. Counts by kind, for the caller's log.
CREATE FUNCTION brigade_erase_person(p_user text) RETURNS jsonb
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
  usage integer;
  conversations integer;
  keys integer;
  ids uuid[];
BEGIN
  usage := public.brigade_fold_usage(acting, NULL, NULL);
  WITH gone AS (DELETE FROM public.conversations WHERE user_id = acting RETURNING id)
  SELECT array_agg(id) INTO ids FROM gone;
  conversations := coalesce(array_length(ids, 1), 0);
  DELETE FROM public.idempotency_keys WHERE user_id = acting;
  GET DIAGNOSTICS keys = ROW_COUNT;
  -- rows a crashed write may have left without a conversation cannot exist (foreign keys), but be sure
  DELETE FROM public.messages WHERE user_id = acting;
  DELETE FROM public.events WHERE user_id = acting;
  DELETE FROM public.tool_calls WHERE user_id = acting;
  PERFORM pg_notify('brigade_events', id::text) FROM unnest(coalesce(ids, '{}')) AS id;
  RETURN jsonb_build_object('conversations', conversations, 'usageRows', usage, 'idempotencyKeys', keys);
END $$;
REVOKE EXECUTE ON FUNCTION brigade_erase_person(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_erase_person(text) TO brigade_app;

-- The recipes agent's saved recipes of p_user, soft-deleted ones too (the app has no DELETE on the table);
-- returns their ids so that the caller removes their images.
CREATE FUNCTION brigade_erase_saved_recipes(p_user text) RETURNS SETOF uuid
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
BEGIN
  RETURN QUERY DELETE FROM public.saved_recipes WHERE user_id = acting RETURNING id;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_erase_saved_recipes(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_erase_saved_recipes(text) TO brigade_app;
