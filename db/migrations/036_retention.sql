-- Retention (issue 35): RETENTION_CONVERSATIONS and RETENTION_USAGE, applied by a scheduled sweep
-- (src/protection/retention.ts). The sweep runs for no user, so it needs two things row-level security
-- would hide: the conversations of anyone whose last event is older than the cut-off, and every usage row
-- older than the other cut-off. These functions give exactly that (ids and owners, no content) and no more;
-- each conversation is then erased as its owner, through brigade_delete_conversation, as DELETE does.
CREATE FUNCTION brigade_expired_conversations(p_before timestamptz, p_limit integer)
  RETURNS TABLE (id uuid, user_id text, workflow_id text)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
    SELECT c.id, c.user_id, c.workflow_id
      FROM public.conversations c
     WHERE c.created_at < p_before
       AND NOT EXISTS (SELECT 1 FROM public.events e WHERE e.conversation_id = c.id AND e.created_at >= p_before)
     ORDER BY c.created_at
     LIMIT least(greatest(p_limit, 1), 1000)
  $$;
REVOKE EXECUTE ON FUNCTION brigade_expired_conversations(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_expired_conversations(timestamptz, integer) TO brigade_app;

-- Usage rows older than p_before become anonymous daily totals (035's usage_totals); returns how many went.
CREATE FUNCTION brigade_sweep_usage(p_before timestamptz) RETURNS integer
  LANGUAGE sql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$ SELECT public.brigade_fold_usage(NULL, NULL, p_before) $$;
REVOKE EXECUTE ON FUNCTION brigade_sweep_usage(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_sweep_usage(timestamptz) TO brigade_app;

CREATE INDEX conversations_created ON conversations (created_at);
CREATE INDEX events_conversation_time ON events (conversation_id, created_at);
