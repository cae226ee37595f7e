-- The bars a person may open a beer conversation for, by name, so the web client offers a list instead of
-- asking for a CLT- id nobody remembers (issue 23). Row-level security on beer.customers shows one client
-- at a time, the one the app set, so no query of brigade_app can list several: this function runs as its
-- owner to get past that, and returns the directory columns only (id, name, city, state), none of what a
-- bar bought or likes.
--
-- Who may see which bars is the token's to say (its client, or the beer-staff role), and the database does
-- not know tokens: the app passes the token's client, and passes NULL (every bar) only for beer staff
-- without a client of their own, the callers that may already name any bar when they open a conversation.
-- brigade_beer_sql, which runs SQL a model wrote, may not call it: a model that could list every bar could
-- name another client.
CREATE FUNCTION beer.bars_for(p_client text)
  RETURNS TABLE (client_id text, name text, city text, state text)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
AS $$
  SELECT c.client_id, c.client_name, c.client_city, c.client_state
    FROM beer.customers c
   WHERE p_client IS NULL OR c.client_id = p_client
   ORDER BY lower(c.client_name), c.client_id
$$;
REVOKE EXECUTE ON FUNCTION beer.bars_for(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION beer.bars_for(text) TO brigade_app;
