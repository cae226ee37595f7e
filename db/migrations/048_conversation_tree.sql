-- The conversation is a tree (issue 45): each message has a parent (NULL for a first message), and the conversation
-- keeps its current leaf, so the branch in use survives continue-as-new and a worker's restart. The model reads the
-- path from the root to the leaf; the other branches stay in the transcript, never shortened or rewritten.
--
-- Writes need no parent from their caller: a batch's messages hang one under the other from the current leaf, and
-- the last one it inserts becomes the leaf (a retry that finds them written moves nothing). A turn that starts
-- elsewhere (an edit, a regenerate, a branch switch) first moves the leaf with brigade_set_leaf.

ALTER TABLE messages ADD COLUMN parent_id text;
ALTER TABLE conversations ADD COLUMN leaf_id text;
-- Whether the leaf ever moved: until then the conversation is one branch, its messages in seq order, and a step
-- reads its window as before (the newest rows by seq) instead of walking up the tree.
ALTER TABLE conversations ADD COLUMN branched boolean NOT NULL DEFAULT false;

-- Existing conversations become a single branch: each message's parent is the one before it.
UPDATE messages AS m
   SET parent_id = ordered.previous
  FROM (SELECT conversation_id, id, lag(id) OVER (PARTITION BY conversation_id ORDER BY seq) AS previous FROM messages) AS ordered
 WHERE m.conversation_id = ordered.conversation_id AND m.id = ordered.id AND ordered.previous IS NOT NULL;
UPDATE conversations AS c
   SET leaf_id = (SELECT m.id FROM messages AS m WHERE m.conversation_id = c.id ORDER BY m.seq DESC LIMIT 1);

-- A message's children (its siblings' lookup, a branch's newest leaf); the walk up to the root uses the primary key.
CREATE INDEX messages_children ON messages (conversation_id, parent_id, seq);

GRANT UPDATE (leaf_id, branched) ON conversations TO brigade_app;

CREATE OR REPLACE FUNCTION brigade_write_batch(
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
  leaf text;
  newest text;
BEGIN
  IF jsonb_array_length(p_messages) > 0 THEN
    -- Writers of one conversation take turns here, so two batches never hang from the same leaf by accident.
    SELECT c.leaf_id INTO leaf FROM conversations AS c WHERE c.id = p_conversation FOR UPDATE;
  END IF;
  WITH given AS (
    SELECT m.item, m.n, coalesce(lag(m.item->>'id') OVER (ORDER BY m.n), leaf) AS parent
      FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS m(item, n)
  ), written AS (
    INSERT INTO messages (id, conversation_id, user_id, role, text, tool_calls, call_id, tool, args, result, cards, structured, parent_id)
    SELECT g.item->>'id', p_conversation, p_user, g.item->>'role', g.item->>'text', g.item->'toolCalls', g.item->>'callId',
           g.item->>'tool', g.item->'args', g.item->'result', g.item->'cards', g.item->'structured', g.parent
      FROM given AS g
     ORDER BY g.n
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
  IF cardinality(inserted) > 0 THEN
    SELECT m.item->>'id' INTO newest
      FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS m(item, n)
     WHERE m.item->>'id' = ANY (inserted)
     ORDER BY m.n DESC LIMIT 1;
    UPDATE conversations SET leaf_id = newest WHERE id = p_conversation;
  END IF;
  RETURN inserted;
END $$;

-- The path from p_leaf up to the root, newest first (depth 1 is p_leaf). Without p_to_root it ends at the first message
-- a summary folds (folded: true): what a step reads, and the summary in force, which is one only if it folds an
-- ancestor of the leaf (a branch that left the summarised prefix never reads a summary of messages not on its path).
CREATE FUNCTION brigade_path(p_conversation uuid, p_leaf text, p_to_root boolean)
  RETURNS TABLE (id text, role text, text text, tool_calls jsonb, call_id text, tool text, args jsonb, result jsonb, cards jsonb, structured jsonb, seq bigint,
                 parent_id text, depth integer, folded boolean)
  LANGUAGE sql STABLE
  AS $$
  WITH RECURSIVE path AS (
    SELECT m.id, m.role, m.text, m.tool_calls, m.call_id, m.tool, m.args, m.result, m.cards, m.structured, m.seq, m.parent_id, 1 AS depth,
           EXISTS (SELECT FROM conversation_summaries AS s WHERE s.conversation_id = p_conversation AND s.through_message_id = m.id) AS folded
      FROM messages AS m
     WHERE m.conversation_id = p_conversation AND m.id = p_leaf
    UNION ALL
    SELECT m.id, m.role, m.text, m.tool_calls, m.call_id, m.tool, m.args, m.result, m.cards, m.structured, m.seq, m.parent_id, path.depth + 1,
           EXISTS (SELECT FROM conversation_summaries AS s WHERE s.conversation_id = p_conversation AND s.through_message_id = m.id)
      -- one primary-key lookup per step up: LATERAL and LIMIT keep the planner from scanning the conversation at each step
      FROM path, LATERAL (SELECT * FROM messages AS p WHERE p.conversation_id = p_conversation AND p.id = path.parent_id LIMIT 1) AS m
     WHERE p_to_root OR NOT path.folded
  )
  SELECT * FROM path
$$;

-- What a model step does first, bounded: as in 046 while the conversation is one branch; once it branched, of the
-- current branch: at most p_limit of the newest messages
-- on the path to the leaf (oldest first) and the summary in force on that path (a last row of role 'summary'). The
-- walk up stops at the summary's message or after p_limit + 1 rows, so a step reads O(window) rows as before; only
-- when the window is cut before a summary does a second walk look for it.
CREATE OR REPLACE FUNCTION brigade_write_batch_read_window(p_user text, p_conversation uuid, p_messages jsonb, p_events jsonb, p_limit integer)
  RETURNS TABLE (id text, role text, text text, tool_calls jsonb, call_id text, tool text, args jsonb, result jsonb, cards jsonb, structured jsonb, seq bigint)
  LANGUAGE plpgsql
  AS $$
DECLARE
  acting text := brigade_act_for(p_user);
  inserted text[];
  leaf text;
  branched boolean;
  summarised boolean;
  walked integer;
  summary conversation_summaries%ROWTYPE;
  after_seq bigint := 0;
BEGIN
  IF jsonb_array_length(p_messages) > 0 OR jsonb_array_length(p_events) > 0 THEN
    inserted := brigade_write_batch(p_user, p_conversation, p_messages, p_events);
  END IF;
  SELECT c.leaf_id, c.branched INTO leaf, branched FROM conversations AS c WHERE c.id = p_conversation;
  IF NOT branched THEN
    -- one branch: its newest rows by seq, after the latest summary (as 046 read them), the summary last
    SELECT * INTO summary FROM conversation_summaries AS s
     WHERE s.conversation_id = p_conversation ORDER BY s.through_seq DESC LIMIT 1;
    IF FOUND THEN
      after_seq := summary.through_seq;
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
    IF summary.through_message_id IS NOT NULL THEN
      RETURN QUERY SELECT summary.through_message_id, 'summary'::text, summary.text, NULL::jsonb, NULL::text, NULL::text,
        jsonb_build_object('version', summary.version, 'tokens', summary.tokens), NULL::jsonb, NULL::jsonb, NULL::jsonb, summary.through_seq;
    END IF;
    RETURN;
  END IF;
  summarised := EXISTS (SELECT FROM conversation_summaries AS s WHERE s.conversation_id = p_conversation);
  RETURN QUERY
    WITH RECURSIVE path AS (
      SELECT m.id, m.role, m.text, m.tool_calls, m.call_id, m.tool, m.args, m.result, m.cards, m.structured, m.seq, m.parent_id, 1 AS depth,
             summarised AND EXISTS (SELECT FROM conversation_summaries AS s WHERE s.conversation_id = p_conversation AND s.through_message_id = m.id) AS folded
        FROM messages AS m
       WHERE m.conversation_id = p_conversation AND m.id = leaf
      UNION ALL
      SELECT m.id, m.role, m.text, m.tool_calls, m.call_id, m.tool, m.args, m.result, m.cards, m.structured, m.seq, m.parent_id, path.depth + 1,
             summarised AND EXISTS (SELECT FROM conversation_summaries AS s WHERE s.conversation_id = p_conversation AND s.through_message_id = m.id)
        FROM path, LATERAL (SELECT * FROM messages AS p WHERE p.conversation_id = p_conversation AND p.id = path.parent_id LIMIT 1) AS m
       WHERE NOT path.folded
    ), head AS MATERIALIZED (
      -- a chain's walk yields its rows in depth order: the LIMIT ends the walk
      SELECT * FROM path LIMIT p_limit + 1
    )
    SELECT r.id, r.role, r.text, r.tool_calls, r.call_id, r.tool, r.args, r.result, r.cards, r.structured, r.seq FROM (
      SELECT h.id, h.role, h.text, h.tool_calls, h.call_id, h.tool, h.args, h.result, h.cards, h.structured, h.seq, h.depth
        FROM head AS h WHERE NOT h.folded AND h.depth <= p_limit
      UNION ALL
      SELECT s.through_message_id, 'summary'::text, s.text, NULL::jsonb, NULL::text, NULL::text,
             jsonb_build_object('version', s.version, 'tokens', s.tokens), NULL::jsonb, NULL::jsonb, NULL::jsonb, s.through_seq, 0
        FROM head AS h JOIN conversation_summaries AS s ON s.conversation_id = p_conversation AND s.through_message_id = h.id
       WHERE h.folded
    ) AS r
    ORDER BY r.depth DESC;
  GET DIAGNOSTICS walked = ROW_COUNT;
  -- cut before a summary: the one in force is further up the path
  IF summarised AND walked = p_limit THEN
    RETURN QUERY
      SELECT s.through_message_id, 'summary'::text, s.text, NULL::jsonb, NULL::text, NULL::text,
             jsonb_build_object('version', s.version, 'tokens', s.tokens), NULL::jsonb, NULL::jsonb, NULL::jsonb, s.through_seq
        FROM brigade_path(p_conversation, leaf, false) AS p
        JOIN conversation_summaries AS s ON s.conversation_id = p_conversation AND s.through_message_id = p.id
       WHERE p.folded;
  END IF;
END $$;

REVOKE EXECUTE ON FUNCTION brigade_path(uuid, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_path(uuid, text, boolean) TO brigade_app;

-- Moves the conversation's leaf (an edit, a regenerate, a branch switch): to p_message itself, or with p_descend to the
-- newest message under it (the leaf of the branch last written there), so that a client can name a branch by any
-- of its messages (the sibling it shows). NULL hangs the next message at the root (an edit of a first message).
-- Returns the new leaf; a message not in the conversation (or a conversation not the user's) is refused.
CREATE FUNCTION brigade_set_leaf(p_user text, p_conversation uuid, p_message text, p_descend boolean)
  RETURNS text
  LANGUAGE plpgsql
  AS $$
DECLARE
  acting text := brigade_act_for(p_user);
  leaf text := p_message;
BEGIN
  PERFORM FROM conversations AS c WHERE c.id = p_conversation FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'conversation % is not one of this user''s', p_conversation USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF p_message IS NOT NULL THEN
    PERFORM FROM messages AS m WHERE m.conversation_id = p_conversation AND m.id = p_message;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'message % is not in conversation %', p_message, p_conversation USING ERRCODE = 'no_data_found';
    END IF;
  END IF;
  IF p_descend AND p_message IS NOT NULL THEN
    WITH RECURSIVE below AS (
      SELECT m.id, m.seq FROM messages AS m WHERE m.conversation_id = p_conversation AND m.id = p_message
      UNION ALL
      SELECT m.id, m.seq FROM below, LATERAL (SELECT * FROM messages AS c WHERE c.conversation_id = p_conversation AND c.parent_id = below.id OFFSET 0) AS m
    )
    SELECT below.id INTO leaf FROM below ORDER BY below.seq DESC LIMIT 1;
  END IF;
  UPDATE conversations AS c SET leaf_id = leaf, branched = c.branched OR leaf IS DISTINCT FROM c.leaf_id WHERE c.id = p_conversation;
  RETURN leaf;
END $$;

REVOKE EXECUTE ON FUNCTION brigade_set_leaf(text, uuid, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_set_leaf(text, uuid, text, boolean) TO brigade_app;
