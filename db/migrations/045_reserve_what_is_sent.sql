-- Budgets kept before the call (issue 43): a call reserves what it will really cost, the tokens of its request
-- (estimated by the app) plus its answer's allowance, and is refused when the request alone does not fit what
-- remains. Before, every call reserved a flat 4,000 tokens and was admitted while anything remained, so one call
-- sent 600,000 tokens against a 3,000-token budget. Now what a limit can be passed by is one call's answer.
--
-- p_tokens/p_cost: the reservation (request + answer allowance); p_fit_tokens/p_fit_cost: the part that must fit
-- below each limit, with what is spent and what calls in flight hold. The reservation is exactly what is asked:
-- the old floor of "the user's last call of this model" is gone, since the estimate is the request's own.
DROP FUNCTION brigade_reserve_usage(text, text, uuid, text, text, text, bigint, numeric, text, bigint, numeric, bigint, numeric);

CREATE FUNCTION brigade_reserve_usage(
  p_user text, p_key text, p_conversation uuid, p_kind text, p_task text, p_model text,
  p_tokens bigint, p_cost numeric, p_currency text,
  p_conversation_tokens bigint, p_conversation_money numeric, p_day_tokens bigint, p_day_money numeric,
  p_fit_tokens bigint, p_fit_cost numeric
) RETURNS TABLE (admitted boolean, scope text, unit text, spent numeric, spend_limit numeric)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
  today date := (now() AT TIME ZONE 'UTC')::date;
  conv_tokens numeric := 0;
  conv_money numeric := 0;
  day_tokens numeric := 0;
  day_money numeric := 0;
  fit_tokens numeric := greatest(coalesce(p_fit_tokens, 0), 0);
  fit_cost numeric := greatest(coalesce(p_fit_cost, 0), 0);
BEGIN
  -- One user's reservations queue here; other users' do not wait.
  PERFORM pg_advisory_xact_lock(hashtextextended('brigade.usage:' || p_user, 0));
  IF EXISTS (SELECT FROM public.usage_ledger AS l WHERE l.user_id = p_user AND l.key = p_key) THEN
    RETURN QUERY SELECT true, NULL::text, NULL::text, NULL::numeric, NULL::numeric;
    RETURN;
  END IF;
  SELECT coalesce(sum(l.tokens) FILTER (WHERE l.day = today), 0),
         coalesce(sum(l.cost) FILTER (WHERE l.day = today AND l.currency = p_currency), 0),
         coalesce(sum(l.tokens) FILTER (WHERE l.conversation_id = p_conversation), 0),
         coalesce(sum(l.cost) FILTER (WHERE l.conversation_id = p_conversation AND l.currency = p_currency), 0)
    INTO day_tokens, day_money, conv_tokens, conv_money
    FROM public.usage_ledger AS l
   WHERE l.user_id = p_user AND (l.day = today OR (p_conversation IS NOT NULL AND l.conversation_id = p_conversation));
  -- refused when the limit is reached, or when the request would pass it: `spent` is what is spent and held
  IF p_conversation IS NOT NULL AND p_conversation_tokens IS NOT NULL
     AND (conv_tokens >= p_conversation_tokens OR conv_tokens + fit_tokens > p_conversation_tokens) THEN
    RETURN QUERY SELECT false, 'conversation', 'tokens', conv_tokens, p_conversation_tokens::numeric;
    RETURN;
  END IF;
  IF p_conversation IS NOT NULL AND p_conversation_money IS NOT NULL
     AND (conv_money >= p_conversation_money OR conv_money + fit_cost > p_conversation_money) THEN
    RETURN QUERY SELECT false, 'conversation', 'money', conv_money, p_conversation_money;
    RETURN;
  END IF;
  IF p_day_tokens IS NOT NULL AND (day_tokens >= p_day_tokens OR day_tokens + fit_tokens > p_day_tokens) THEN
    RETURN QUERY SELECT false, 'user-day', 'tokens', day_tokens, p_day_tokens::numeric;
    RETURN;
  END IF;
  IF p_day_money IS NOT NULL AND (day_money >= p_day_money OR day_money + fit_cost > p_day_money) THEN
    RETURN QUERY SELECT false, 'user-day', 'money', day_money, p_day_money;
    RETURN;
  END IF;
  INSERT INTO public.usage_ledger (user_id, key, conversation_id, kind, task, model, tokens, cost, currency)
  VALUES (p_user, p_key, p_conversation, p_kind, p_task, p_model, p_tokens, p_cost, p_currency);
  RETURN QUERY SELECT true, NULL::text, NULL::text, NULL::numeric, NULL::numeric;
END $$;

REVOKE EXECUTE ON FUNCTION brigade_reserve_usage(text, text, uuid, text, text, text, bigint, numeric, text, bigint, numeric, bigint, numeric, bigint, numeric) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_reserve_usage(text, text, uuid, text, text, text, bigint, numeric, text, bigint, numeric, bigint, numeric, bigint, numeric) TO brigade_app;
