-- Events arrive in batches (a message with its tool calls, a burst of deltas): wake subscribers once
-- per statement and conversation instead of once per row.
DROP TRIGGER events_notify ON events;
DROP FUNCTION notify_event();

CREATE FUNCTION notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('brigade_events', conversation_id::text) FROM (SELECT DISTINCT conversation_id FROM new_events) AS touched;
  RETURN NULL;
END $$;

CREATE TRIGGER events_notify AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION notify_events();
