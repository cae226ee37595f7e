-- Aggregates across clients that no combination of answers can take apart (issue 17, item 2).
--
-- Until now each sales_by_* view left out its own groups of fewer than 3 clients, independently. But a
-- view's total and the sum of a finer view's rows could differ by exactly a left-out group, so a
-- subtraction recovered one or two bars' purchases. Now every view is computed from one published set
-- of purchases, fixed so that differences have nothing left to reveal:
--   1. The asking client's own purchases are left out: a bar knows its own figures, and subtracting them
--      from a group must not leave fewer than k others.
--   2. Purchases are dropped, repeatedly until nothing changes, while they fall in a group of fewer than
--      k clients in any published partition: (region, beer), brewery, month. What remains (the published
--      set) has every cell of every partition at k clients or more.
--   3. Coarser views are sums of the published set (sales_by_beer, sales_by_region), so a total minus its
--      parts is zero, never a hidden group.
--   4. States are finer than regions and mostly hold one or two bars, so a (state, beer) cell is shown
--      only when it has k clients and the rest of its (region, beer) cell has k clients or none; when the
--      rest would be too small, the smallest shown state is folded back into it, until it is not.
--      sales_by_state sums the shown (state, beer) cells, so it reveals nothing they do not.
-- Every figure a query can compute from the views is then a sum or difference of cells of at least k
-- clients. Cells of two different partitions (a brewery and a month) overlap, and their overlap is not
-- published; margins of one population do not determine an overlap (docs/security.md).
-- k is beer.privacy.min_clients (at least 3; the app sets it from BEER_MIN_CLIENTS at start).

CREATE TABLE beer.privacy (
  only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  min_clients integer NOT NULL DEFAULT 3 CHECK (min_clients >= 3)
);
INSERT INTO beer.privacy DEFAULT VALUES;
GRANT SELECT, UPDATE (min_clients) ON beer.privacy TO brigade_app;

-- Every purchase but the asker's, with the keys the partitions group by.
CREATE FUNCTION beer.purchases_of_others(p_asker text)
  RETURNS TABLE (client_id text, region text, state text, beer text, brewery text, month date, quantity integer)
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, public
AS $$
  SELECT p.client_id, beer.region_of(c.client_state), c.client_state, p.beer, p.brewery,
         date_trunc('month', p.purchased_on)::date, p.quantity
    FROM beer.purchases p JOIN beer.customers c USING (client_id)
   WHERE p.client_id <> p_asker
$$;
REVOKE EXECUTE ON FUNCTION beer.purchases_of_others(text) FROM PUBLIC;

-- The published set, for the sealed identity's client (none otherwise: without a trusted asker there is
-- nobody to leave out). Runs as its owner, which reads every client's rows; only the views may call it.
CREATE FUNCTION beer.published_purchases()
  RETURNS TABLE (client_key text, region text, state text, beer text, brewery text, month date, quantity integer)
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
AS $$
DECLARE
  k integer := (SELECT p.min_clients FROM beer.privacy p);
  asker text := beer.current_client();
  drop_rb text[] := '{}';
  drop_br text[] := '{}';
  drop_mo date[] := '{}';
  more_rb text[];
  more_br text[];
  more_mo date[];
  shown text[];
  folded text[];
BEGIN
  IF asker IS NULL OR NOT coalesce(public.brigade_identity_sealed(), false) THEN
    RETURN;
  END IF;

  -- 2. drop purchases in any partition's small cell until every cell has k clients
  LOOP
    WITH e AS (
      SELECT o.* FROM beer.purchases_of_others(asker) o
       WHERE NOT (o.region || '|' || o.beer = ANY (drop_rb)) AND NOT (o.brewery = ANY (drop_br)) AND NOT (o.month = ANY (drop_mo))
    )
    SELECT (SELECT coalesce(array_agg(x.key), '{}') FROM (SELECT e.region || '|' || e.beer AS key FROM e GROUP BY 1 HAVING count(DISTINCT e.client_id) < k) x),
           (SELECT coalesce(array_agg(x.brewery), '{}') FROM (SELECT e.brewery FROM e GROUP BY 1 HAVING count(DISTINCT e.client_id) < k) x),
           (SELECT coalesce(array_agg(x.month), '{}') FROM (SELECT e.month FROM e GROUP BY 1 HAVING count(DISTINCT e.client_id) < k) x)
      INTO more_rb, more_br, more_mo;
    EXIT WHEN cardinality(more_rb) = 0 AND cardinality(more_br) = 0 AND cardinality(more_mo) = 0;
    drop_rb := drop_rb || more_rb;
    drop_br := drop_br || more_br;
    drop_mo := drop_mo || more_mo;
  END LOOP;

  -- 4. (state, beer) cells of k clients, then fold back the smallest while the rest of a region's cell is too small
  WITH e AS (
    SELECT o.* FROM beer.purchases_of_others(asker) o
     WHERE NOT (o.region || '|' || o.beer = ANY (drop_rb)) AND NOT (o.brewery = ANY (drop_br)) AND NOT (o.month = ANY (drop_mo))
  )
  SELECT coalesce(array_agg(x.key), '{}') INTO shown
    FROM (SELECT e.state || '|' || e.beer AS key FROM e GROUP BY e.state, e.beer HAVING count(DISTINCT e.client_id) >= k) x;
  LOOP
    WITH e AS (
      SELECT o.* FROM beer.purchases_of_others(asker) o
       WHERE NOT (o.region || '|' || o.beer = ANY (drop_rb)) AND NOT (o.brewery = ANY (drop_br)) AND NOT (o.month = ANY (drop_mo))
    ), short AS (
      -- region cells whose rest (purchases outside shown states) has some clients, but fewer than k
      SELECT e.region, e.beer FROM e
       WHERE NOT (e.state || '|' || e.beer = ANY (shown))
       GROUP BY e.region, e.beer HAVING count(DISTINCT e.client_id) < k
    ), smallest AS (
      SELECT DISTINCT ON (e.region, e.beer) e.state || '|' || e.beer AS key
        FROM e JOIN short s ON s.region = e.region AND s.beer = e.beer
       WHERE e.state || '|' || e.beer = ANY (shown)
       GROUP BY e.region, e.beer, e.state
       ORDER BY e.region, e.beer, count(DISTINCT e.client_id), sum(e.quantity), e.state
    )
    SELECT coalesce(array_agg(smallest.key), '{}') INTO folded FROM smallest;
    EXIT WHEN cardinality(folded) = 0;
    shown := ARRAY(SELECT unnest(shown) EXCEPT SELECT unnest(folded));
  END LOOP;

  RETURN QUERY
    SELECT o.client_id, o.region, CASE WHEN o.state || '|' || o.beer = ANY (shown) THEN o.state END, o.beer, o.brewery, o.month, o.quantity
      FROM beer.purchases_of_others(asker) o
     WHERE NOT (o.region || '|' || o.beer = ANY (drop_rb)) AND NOT (o.brewery = ANY (drop_br)) AND NOT (o.month = ANY (drop_mo));
END
$$;
REVOKE EXECUTE ON FUNCTION beer.published_purchases() FROM PUBLIC;

-- The published set's cells of one partition, for the views. A view's reader needs EXECUTE on the
-- functions it calls, so this is what the readers may call; it answers only what the views show (the
-- rows with client ids stay inside published_purchases, which nobody but its owner may call).
CREATE FUNCTION beer.published_sales(p_by text)
  RETURNS TABLE (region text, state text, beer text, brewery text, month date, clients bigint, purchases bigint, total_quantity bigint)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
AS $$
  SELECT CASE WHEN p_by IN ('region', 'region_beer') THEN p.region END,
         CASE WHEN p_by IN ('state', 'state_beer') THEN p.state END,
         CASE WHEN p_by IN ('beer', 'region_beer', 'state_beer') THEN p.beer END,
         CASE WHEN p_by = 'brewery' THEN p.brewery END,
         CASE WHEN p_by = 'month' THEN p.month END,
         count(DISTINCT p.client_key), count(*), sum(p.quantity)
    FROM beer.published_purchases() p
   WHERE p_by IN ('region', 'region_beer', 'beer', 'brewery', 'month') OR (p_by IN ('state', 'state_beer') AND p.state IS NOT NULL)
   GROUP BY 1, 2, 3, 4, 5
$$;
REVOKE EXECUTE ON FUNCTION beer.published_sales(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION beer.published_sales(text) TO brigade_app, brigade_beer_sql;

-- The views keep their names and columns.
CREATE OR REPLACE VIEW beer.sales_by_beer WITH (security_barrier = true, security_invoker = false) AS
  SELECT s.beer, s.clients, s.purchases, s.total_quantity FROM beer.published_sales('beer') s;
CREATE OR REPLACE VIEW beer.sales_by_brewery WITH (security_barrier = true, security_invoker = false) AS
  SELECT s.brewery, s.clients, s.purchases, s.total_quantity FROM beer.published_sales('brewery') s;
CREATE OR REPLACE VIEW beer.sales_by_state WITH (security_barrier = true, security_invoker = false) AS
  SELECT s.state, s.clients, s.purchases, s.total_quantity FROM beer.published_sales('state') s;
CREATE OR REPLACE VIEW beer.sales_by_state_beer WITH (security_barrier = true, security_invoker = false) AS
  SELECT s.state, s.beer, s.clients, s.purchases, s.total_quantity FROM beer.published_sales('state_beer') s;
CREATE OR REPLACE VIEW beer.sales_by_region_beer WITH (security_barrier = true, security_invoker = false) AS
  SELECT s.region, s.beer, s.clients, s.purchases, s.total_quantity FROM beer.published_sales('region_beer') s;
CREATE OR REPLACE VIEW beer.sales_by_month WITH (security_barrier = true, security_invoker = false) AS
  SELECT s.month, s.clients, s.purchases, s.total_quantity FROM beer.published_sales('month') s;
CREATE VIEW beer.sales_by_region WITH (security_barrier = true, security_invoker = false) AS
  SELECT s.region, s.clients, s.purchases, s.total_quantity FROM beer.published_sales('region') s;
GRANT SELECT ON beer.sales_by_region TO brigade_app, brigade_beer_sql;
