-- An event stream holds a live delta that arrives while it owes a table read, and used to write it after
-- everything that read found, which could include events committed after the delta (the turn's end): a
-- client that stops at turn.ended then never saw it. The wake-up now names the newest event id it is
-- for ("<conversation>:<id>"), so a stream knows which events a delta came after and writes it among them
-- in commit order. An id says nothing a client of that conversation cannot read anyway.
CREATE OR REPLACE FUNCTION notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('brigade_events', conversation_id::text || ':' || newest::text)
     FROM (SELECT conversation_id, max(id) AS newest FROM new_events GROUP BY conversation_id) AS touched;
  RETURN NULL;
END $$;
