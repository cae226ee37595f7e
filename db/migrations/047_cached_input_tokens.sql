-- Cached input tokens in the usage ledger (issue 44, item 4): the part of a call's input the provider read from
-- its context cache (Gemini's cachedContentTokenCount, OpenAI's prompt_tokens_details.cached_tokens, Anthropic's
-- cache_read_input_tokens). They are part of input_tokens already; this column says how many of them were
-- cached, so that a conversation's usage can show what caching saved and a price can bill them at their rate.
-- NULL: the provider reported none (every row before this migration).
ALTER TABLE usage_ledger ADD COLUMN cached_input_tokens bigint;

-- brigade_settle_usage (028) with the cached part as its 13th argument. Dropped and made again, as 045 did for
-- brigade_reserve_usage: an overload would leave two functions to keep the same.
DROP FUNCTION brigade_settle_usage(text, text, uuid, text, text, text, bigint, bigint, bigint, integer, numeric, text);

CREATE FUNCTION brigade_settle_usage(
  p_user text, p_key text, p_conversation uuid, p_kind text, p_task text, p_model text,
  p_input bigint, p_output bigint, p_total bigint, p_images integer, p_cost numeric, p_currency text,
  p_cached_input bigint
) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
BEGIN
  INSERT INTO public.usage_ledger AS l (user_id, key, conversation_id, kind, task, model, settled, tokens, cost, currency,
                                        input_tokens, output_tokens, images, cached_input_tokens, settled_at)
  VALUES (p_user, p_key, p_conversation, p_kind, p_task, p_model, true, p_total, coalesce(p_cost, 0), p_currency,
          p_input, p_output, p_images, p_cached_input, now())
  ON CONFLICT (user_id, key) DO UPDATE
     SET settled = true, tokens = EXCLUDED.tokens, cost = EXCLUDED.cost, currency = EXCLUDED.currency,
         input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens, images = EXCLUDED.images,
         cached_input_tokens = EXCLUDED.cached_input_tokens, settled_at = now()
   WHERE NOT l.settled;
END $$;

REVOKE EXECUTE ON FUNCTION brigade_settle_usage(text, text, uuid, text, text, text, bigint, bigint, bigint, integer, numeric, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_settle_usage(text, text, uuid, text, text, text, bigint, bigint, bigint, integer, numeric, text, bigint) TO brigade_app;
