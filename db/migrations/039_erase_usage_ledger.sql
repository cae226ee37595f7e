-- The usage ledger (028) is a person's data like model_usage: erasing a person, or usage past RETENTION_USAGE,
-- folds their settled calls into the anonymous usage_totals (035) and deletes the rows; calls still in flight
-- just go. Deleting one conversation still leaves the ledger alone, so that a delete refunds no budget.
CREATE OR REPLACE FUNCTION brigade_fold_usage(p_user text, p_conversation uuid, p_before timestamptz) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  folded integer;
  ledger integer := 0;
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

  IF p_conversation IS NULL THEN
    -- Chat calls are in model_usage as well (028 copies them there): only the ledger's other calls add to the totals.
    WITH gone AS (
      DELETE FROM public.usage_ledger
       WHERE (p_user IS NULL OR user_id = p_user)
         AND (p_before IS NULL OR created_at < p_before)
      RETURNING day, model, kind, settled, input_tokens, output_tokens, tokens
    ), sums AS (
      SELECT day, model, count(*) AS calls, sum(coalesce(input_tokens, 0)) AS i, sum(coalesce(output_tokens, 0)) AS o, sum(tokens) AS t
        FROM gone WHERE settled AND kind <> 'chat' GROUP BY 1, 2
    ), added AS (
      INSERT INTO public.usage_totals AS u (day, model, calls, input_tokens, output_tokens, total_tokens)
      SELECT day, model, calls, i, o, t FROM sums
      ON CONFLICT (day, model) DO UPDATE
        SET calls = u.calls + excluded.calls, input_tokens = u.input_tokens + excluded.input_tokens,
            output_tokens = u.output_tokens + excluded.output_tokens, total_tokens = u.total_tokens + excluded.total_tokens
      RETURNING calls
    )
    SELECT (SELECT count(*) FROM gone) INTO ledger;
  END IF;
  RETURN folded + ledger;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_fold_usage(text, uuid, timestamptz) FROM PUBLIC;
