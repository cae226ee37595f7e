-- The usage ledger (issue 29): one row per model call of any kind (a chat step, a pipeline's structuring,
-- an image, SQL from a question, a grounded summary), kept per user and apart from the conversation, so that
-- deleting a conversation refunds nothing (no foreign key, no cascade). Budgets are checked against it.
--
-- A call is reserved before it is made and settled with the usage the model reports. Reserving is one
-- transaction that holds the user's advisory lock: it sums what is spent (settled calls at their reported
-- usage, calls still in flight at their reservation), refuses when a limit is reached, and otherwise writes
-- the reservation. Two calls of one user can no longer both pass a check that only one of them fits in: the
-- overshoot past a limit is at most what the calls admitted below it use beyond their reservations.
--
-- The app may read its own rows (row-level security) and write only through the two functions below, which
-- run as their owner and act for the user they are given; a settled row is never changed again.
CREATE TABLE usage_ledger (
  user_id         text NOT NULL,
  -- stable per logical call (a retried attempt reuses its reservation): `chat:<conversation>:<step>`, ...
  key             text NOT NULL,
  -- no foreign key: the row outlives its conversation
  conversation_id uuid,
  kind            text NOT NULL CHECK (kind IN ('chat', 'task', 'image')),
  task            text,
  model           text NOT NULL,
  day             date NOT NULL DEFAULT (now() AT TIME ZONE 'UTC')::date,
  settled         boolean NOT NULL DEFAULT false,
  -- the reservation until settled, then what the model reported
  tokens          bigint NOT NULL,
  cost            numeric(20, 6) NOT NULL DEFAULT 0,
  currency        text,
  input_tokens    bigint,
  output_tokens   bigint,
  images          integer,
  created_at      timestamptz NOT NULL DEFAULT now(),
  settled_at      timestamptz,
  PRIMARY KEY (user_id, key)
);
CREATE INDEX usage_ledger_user_day ON usage_ledger (user_id, day);
CREATE INDEX usage_ledger_user_conversation ON usage_ledger (user_id, conversation_id);

ALTER TABLE usage_ledger ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON usage_ledger USING (user_id = brigade_current_user());
GRANT SELECT ON usage_ledger TO brigade_app;

-- Reserve one call, or refuse it. Limits are NULL when unset; money limits count costs in p_currency. A key
-- reserved before (a retried attempt) is admitted without a new check. The reservation is p_tokens and
-- p_cost (BUDGET_RESERVATION_TOKENS), or more when the user's last call of the same model used more: a call
-- that failed or was stopped early never makes the next reservations small.
-- Returns one row: admitted, and when refused the first limit reached (scope, unit, spent, limit).
CREATE FUNCTION brigade_reserve_usage(
  p_user text, p_key text, p_conversation uuid, p_kind text, p_task text, p_model text,
  p_tokens bigint, p_cost numeric, p_currency text,
  p_conversation_tokens bigint, p_conversation_money numeric, p_day_tokens bigint, p_day_money numeric
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
  est_tokens bigint := p_tokens;
  est_cost numeric := p_cost;
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
  IF p_conversation IS NOT NULL AND p_conversation_tokens IS NOT NULL AND conv_tokens >= p_conversation_tokens THEN
    RETURN QUERY SELECT false, 'conversation', 'tokens', conv_tokens, p_conversation_tokens::numeric;
    RETURN;
  END IF;
  IF p_conversation IS NOT NULL AND p_conversation_money IS NOT NULL AND conv_money >= p_conversation_money THEN
    RETURN QUERY SELECT false, 'conversation', 'money', conv_money, p_conversation_money;
    RETURN;
  END IF;
  IF p_day_tokens IS NOT NULL AND day_tokens >= p_day_tokens THEN
    RETURN QUERY SELECT false, 'user-day', 'tokens', day_tokens, p_day_tokens::numeric;
    RETURN;
  END IF;
  IF p_day_money IS NOT NULL AND day_money >= p_day_money THEN
    RETURN QUERY SELECT false, 'user-day', 'money', day_money, p_day_money;
    RETURN;
  END IF;
  SELECT l.tokens, l.cost INTO est_tokens, est_cost
    FROM public.usage_ledger AS l
   WHERE l.user_id = p_user AND l.model = p_model AND l.kind = p_kind AND l.settled
   ORDER BY l.settled_at DESC
   LIMIT 1;
  INSERT INTO public.usage_ledger (user_id, key, conversation_id, kind, task, model, tokens, cost, currency)
  VALUES (p_user, p_key, p_conversation, p_kind, p_task, p_model,
          greatest(est_tokens, p_tokens), greatest(est_cost, p_cost), p_currency);
  RETURN QUERY SELECT true, NULL::text, NULL::text, NULL::numeric, NULL::numeric;
END $$;

-- Settle a call with what the model reported; a call made without a reservation (no budget was set) is
-- recorded here as settled. A settled row is final: a second settle of the same key changes nothing.
CREATE FUNCTION brigade_settle_usage(
  p_user text, p_key text, p_conversation uuid, p_kind text, p_task text, p_model text,
  p_input bigint, p_output bigint, p_total bigint, p_images integer, p_cost numeric, p_currency text
) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
BEGIN
  INSERT INTO public.usage_ledger AS l (user_id, key, conversation_id, kind, task, model, settled, tokens, cost, currency,
                                        input_tokens, output_tokens, images, settled_at)
  VALUES (p_user, p_key, p_conversation, p_kind, p_task, p_model, true, p_total, coalesce(p_cost, 0), p_currency,
          p_input, p_output, p_images, now())
  ON CONFLICT (user_id, key) DO UPDATE
     SET settled = true, tokens = EXCLUDED.tokens, cost = EXCLUDED.cost, currency = EXCLUDED.currency,
         input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens, images = EXCLUDED.images,
         settled_at = now()
   WHERE NOT l.settled;
END $$;

REVOKE EXECUTE ON FUNCTION brigade_reserve_usage(text, text, uuid, text, text, text, bigint, numeric, text, bigint, numeric, bigint, numeric) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION brigade_settle_usage(text, text, uuid, text, text, text, bigint, bigint, bigint, integer, numeric, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_reserve_usage(text, text, uuid, text, text, text, bigint, numeric, text, bigint, numeric, bigint, numeric) TO brigade_app;
GRANT EXECUTE ON FUNCTION brigade_settle_usage(text, text, uuid, text, text, text, bigint, bigint, bigint, integer, numeric, text) TO brigade_app;

-- What was spent before the ledger: today's chat steps, so that a deploy mid-day does not reset budgets.
INSERT INTO usage_ledger (user_id, key, conversation_id, kind, model, day, settled, tokens, input_tokens, output_tokens, created_at, settled_at)
SELECT user_id, 'chat:' || conversation_id || ':' || step_id, conversation_id, 'chat', model, (created_at AT TIME ZONE 'UTC')::date, true,
       total_tokens, input_tokens, output_tokens, created_at, created_at
  FROM model_usage
 WHERE created_at >= date_trunc('day', now(), 'UTC') - interval '1 day'
ON CONFLICT DO NOTHING;
