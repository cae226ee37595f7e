-- The beer agent's data (issue 8; seed 004): the BeerForYou clients (bars) and what they bought, in a
-- schema of their own (the support agent's `customers` is in public).
--
-- Who sees what, decided by the database:
-- - beer.customers and beer.purchases have row-level security keyed on brigade.client_id, which the
--   app sets per transaction from the conversation's client (the token's, never the model's). With no
--   client set, no row is visible.
-- - The aggregate views (beer.sales_by_*) hold no client identity and show only groups bought by at
--   least 3 distinct clients. They are ordinary (security definer) views owned by the migration's
--   login, which owns the tables and so is not limited by their row-level security: they aggregate
--   across clients while whoever reads them sees only the aggregate. security_barrier keeps a reader's
--   conditions from being evaluated on the raw rows before the grouping.
-- - brigade_beer_sql runs the SQL a model writes (run_analytical_query_tool): NOLOGIN, read-only
--   grants on exactly these relations, reached from brigade_app by SET LOCAL ROLE after the app has set
--   brigade.client_id; the parser in src/sql/ refuses set_config and SET, so the query cannot change it.

CREATE SCHEMA beer;

CREATE FUNCTION beer.current_client() RETURNS text
  LANGUAGE sql STABLE
  AS $$ SELECT nullif(current_setting('brigade.client_id', true), '') $$;

CREATE TABLE beer.customers (
  client_id               text PRIMARY KEY CHECK (client_id ~ '^CLT-[A-Z0-9]+$'),
  client_name             text NOT NULL,
  client_city             text NOT NULL,
  client_state            text NOT NULL,   -- the full state name, as OpenBreweryDB takes it ("Oregon")
  postal_code             text NOT NULL,
  top3_brewery_types      text[] NOT NULL,
  top5_beers_recently     text[] NOT NULL,
  top3_breweries_recently text[] NOT NULL
);
CREATE INDEX customers_postal_name ON beer.customers (postal_code, lower(client_name));

-- The fixture (beerforyou-customers.json), as rows.
INSERT INTO beer.customers
  (client_id, client_name, client_city, client_state, postal_code, top3_brewery_types, top5_beers_recently, top3_breweries_recently)
VALUES
  ('CLT-CFY747', '10 Barrel Brewing Co', 'Bend', 'Oregon', '97702', ARRAY['large', 'proprietor', 'planning'], ARRAY['Budweiser', 'SKOL', 'Cass Fresh', 'Quilmes', 'Corona Extra'], ARRAY['The Alchemist Brewery', 'Three Floyds Brewing Co', 'Odell Brewing Co']),
  ('CLT-SBV714', 'Against the Grain Brewery', 'Louisville', 'Kentucky', '40203', ARRAY['brewpub', 'micro', 'contract'], ARRAY['Stella Artois Liberté', 'Stella Artois', 'SKOL', 'Aguila', 'Budweiser Zero'], ARRAY['Victory Brewing Company', 'Ballast Point Brewing Company', 'Stone Brewing']),
  ('CLT-CCW784', 'Ballast Point Brewing Company', 'San Diego', 'California', '92121', ARRAY['large', 'regional', 'planning'], ARRAY['Jupiler', 'Brahma', 'Budweiser Zero', 'Aguila', 'Stella Artois Liberté'], ARRAY['10 Barrel Brewing Co', 'Stone Brewing', 'Russian River Brewing Company']),
  ('CLT-QTJ725', 'Brooklyn Brewery', 'Brooklyn', 'New York', '11249', ARRAY['regional', 'planning', 'micro'], ARRAY['Quilmes', 'Budweiser', 'Corona Extra', 'Brahma', 'Carling Black Label'], ARRAY['Dogfish Head Craft Brewery', 'Wicked Weed Brewing', 'Sierra Nevada Brewing Co']),
  ('CLT-CIR922', 'Deschutes Brewery', 'Bend', 'Oregon', '97702', ARRAY['regional', 'micro', 'brewpub'], ARRAY['Quilmes', 'Corona Extra', 'Stella Artois Liberté', 'Cass Fresh', 'Corona 0.0'], ARRAY['Samuel Adams Brewery', 'Summit Brewing Company', 'Victory Brewing Company']),
  ('CLT-DLP730', 'Dogfish Head Craft Brewery', 'Milton', 'Delaware', '19968', ARRAY['regional', 'planning', 'contract'], ARRAY['Victoria', 'Budweiser Zero', 'Quilmes', 'Carling Black Label', 'Brahma'], ARRAY['Against the Grain Brewery', 'Founders Brewing Co', 'Victory Brewing Company']),
  ('CLT-BFM688', 'Founders Brewing Co', 'Grand Rapids', 'Michigan', '49503', ARRAY['regional', 'brewpub', 'large'], ARRAY['Budweiser Zero', 'Jupiler', 'Budweiser', 'Stella Artois Liberté', 'Stella Artois'], ARRAY['The Alchemist Brewery', 'Sierra Nevada Brewing Co', 'Samuel Adams Brewery']),
  ('CLT-XLX836', 'Great Lakes Brewing Company', 'Cleveland', 'Ohio', '44113', ARRAY['regional', 'brewpub', 'planning'], ARRAY['Quilmes', 'Budweiser Zero', 'Corona Extra', 'Carling Black Label', 'Brahma'], ARRAY['Founders Brewing Co', 'Deschutes Brewery', 'Dogfish Head Craft Brewery']),
  ('CLT-JTF956', 'Lagunitas Brewing Company', 'Petaluma', 'California', '94952', ARRAY['regional', 'proprietor', 'large'], ARRAY['Jupiler', 'SKOL', 'Corona 0.0', 'Stella Artois Liberté', 'Quilmes'], ARRAY['Against the Grain Brewery', 'Wicked Weed Brewing', 'The Alchemist Brewery']),
  ('CLT-KTA988', 'New Belgium Brewing Company', 'Fort Collins', 'Colorado', '80524', ARRAY['regional', 'brewpub', 'large'], ARRAY['Budweiser', 'Carling Black Label', 'Stella Artois', 'Michelob ULTRA', 'Corona 0.0'], ARRAY['10 Barrel Brewing Co', 'Ballast Point Brewing Company', 'Russian River Brewing Company']),
  ('CLT-NZN253', 'Odell Brewing Co', 'Fort Collins', 'Colorado', '80524', ARRAY['regional', 'planning', 'micro'], ARRAY['Budweiser', 'Stella Artois Liberté', 'Stella Artois', 'Corona 0.0', 'Budweiser Zero'], ARRAY['Summit Brewing Company', 'Stone Brewing', 'Victory Brewing Company']),
  ('CLT-MRW351', 'Russian River Brewing Company', 'Santa Rosa', 'California', '95401', ARRAY['micro', 'planning', 'contract'], ARRAY['Jupiler', 'SKOL', 'Budweiser', 'Quilmes', 'Aguila'], ARRAY['Deschutes Brewery', 'Samuel Adams Brewery', 'Brooklyn Brewery']),
  ('CLT-FYP906', 'Samuel Adams Brewery', 'Boston', 'Massachusetts', '02130', ARRAY['large', 'regional', 'brewpub'], ARRAY['Budweiser', 'Corona Extra', 'Aguila', 'Michelob ULTRA', 'Carling Black Label'], ARRAY['Lagunitas Brewing Company', 'Great Lakes Brewing Company', 'Victory Brewing Company']),
  ('CLT-QJR381', 'Sierra Nevada Brewing Co', 'Chico', 'California', '95928', ARRAY['regional', 'contract', 'large'], ARRAY['Aguila', 'Brahma', 'Stella Artois Liberté', 'Jupiler', 'Budweiser Zero'], ARRAY['Wicked Weed Brewing', 'Ballast Point Brewing Company', 'Deschutes Brewery']),
  ('CLT-TRX093', 'Stone Brewing', 'Escondido', 'California', '92029', ARRAY['regional', 'planning', 'proprietor'], ARRAY['Corona 0.0', 'Carling Black Label', 'Quilmes', 'Cass Fresh', 'Jupiler'], ARRAY['Founders Brewing Co', 'Dogfish Head Craft Brewery', 'Sierra Nevada Brewing Co']),
  ('CLT-RUU240', 'Summit Brewing Company', 'Saint Paul', 'Minnesota', '55104', ARRAY['regional', 'micro', 'contract'], ARRAY['SKOL', 'Quilmes', 'Corona Extra', 'Aguila', 'Brahma'], ARRAY['Lagunitas Brewing Company', 'Russian River Brewing Company', 'Founders Brewing Co']),
  ('CLT-IHU036', 'The Alchemist Brewery', 'Stowe', 'Vermont', '05672', ARRAY['micro', 'large', 'contract'], ARRAY['Budweiser', 'Stella Artois Liberté', 'Stella Artois', 'Jupiler', 'Carling Black Label'], ARRAY['10 Barrel Brewing Co', 'Deschutes Brewery', 'Victory Brewing Company']),
  ('CLT-JVX144', 'Three Floyds Brewing Co', 'Munster', 'Indiana', '46321', ARRAY['micro', 'planning', 'proprietor'], ARRAY['Victoria', 'Brahma', 'Aguila', 'Cass Fresh', 'Stella Artois'], ARRAY['Lagunitas Brewing Company', 'Dogfish Head Craft Brewery', 'Deschutes Brewery']),
  ('CLT-XMY992', 'Victory Brewing Company', 'Downingtown', 'Pennsylvania', '19335', ARRAY['regional', 'planning', 'brewpub'], ARRAY['Michelob ULTRA', 'Aguila', 'Jupiler', 'Corona 0.0', 'Cass Fresh'], ARRAY['Brooklyn Brewery', 'Sierra Nevada Brewing Co', '10 Barrel Brewing Co']),
  ('CLT-FWC102', 'Wicked Weed Brewing', 'Asheville', 'North Carolina', '28801', ARRAY['micro', 'regional', 'proprietor'], ARRAY['Brahma', 'Budweiser', 'Corona Extra', 'Carling Black Label', 'Quilmes'], ARRAY['Founders Brewing Co', 'Dogfish Head Craft Brewery', 'Odell Brewing Co']);

CREATE TABLE beer.purchases (
  purchase_id  text PRIMARY KEY,             -- <client_id>-<nn>
  client_id    text NOT NULL REFERENCES beer.customers (client_id),
  purchased_on date NOT NULL,
  beer         text NOT NULL,
  brewery      text NOT NULL,
  quantity     integer NOT NULL CHECK (quantity > 0)   -- cases
);
CREATE INDEX purchases_client ON beer.purchases (client_id, purchased_on);

-- 48 purchases per client, made from md5 of "<client_id>:<n>:<field>" so that every database gets the
-- same rows (no random(), no now()). All fall in 2025. The first 18 are recent (the last 90 days of
-- the year) and come from the client's top 3 recent breweries; the older ones from any real brewery
-- named in the fixture (clients' names and recent breweries) other than the client itself, so that the
-- brewery history is longer than the recent top 3. Beers come from the client's top 5, weighted
-- 5:4:3:2:1 in their order; recent breweries 3:2:1.
WITH h AS (
  SELECT c.client_id, c.client_name, c.top5_beers_recently AS beers, c.top3_breweries_recently AS recent, n,
         ('x' || substr(md5(c.client_id || ':' || n || ':day'), 1, 8))::bit(32)::bigint AS h_day,
         ('x' || substr(md5(c.client_id || ':' || n || ':beer'), 1, 8))::bit(32)::bigint AS h_beer,
         ('x' || substr(md5(c.client_id || ':' || n || ':brewery'), 1, 8))::bit(32)::bigint AS h_brewery,
         ('x' || substr(md5(c.client_id || ':' || n || ':quantity'), 1, 8))::bit(32)::bigint AS h_quantity
    FROM beer.customers c CROSS JOIN generate_series(1, 48) AS n
), pool AS (
  SELECT array_agg(name ORDER BY name) AS names
    FROM (SELECT client_name AS name FROM beer.customers
          UNION SELECT unnest(top3_breweries_recently) FROM beer.customers) AS all_names
), picked AS (
  SELECT h.*,
         (ARRAY[1,1,1,1,1,2,2,2,2,3,3,3,4,4,5])[1 + h_beer % 15] AS beer_index,
         (ARRAY[1,1,1,2,2,3])[1 + h_brewery % 6] AS recent_index,
         (SELECT array_remove(pool.names, h.client_name) FROM pool) AS others
    FROM h
)
INSERT INTO beer.purchases (purchase_id, client_id, purchased_on, beer, brewery, quantity)
SELECT client_id || '-' || lpad(n::text, 2, '0'),
       client_id,
       CASE WHEN n <= 18 THEN date '2025-12-31' - (h_day % 90)::int
            ELSE date '2025-12-31' - 90 - (h_day % 275)::int END,
       beers[beer_index],
       CASE WHEN n <= 18 THEN recent[recent_index]
            ELSE others[1 + (h_brewery % cardinality(others))::int] END,
       1 + (h_quantity % 24)::int
  FROM picked;

ALTER TABLE beer.customers ENABLE ROW LEVEL SECURITY;
ALTER TABLE beer.purchases ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_client ON beer.customers USING (client_id = beer.current_client());
CREATE POLICY own_client ON beer.purchases USING (client_id = beer.current_client());

-- Aggregates across clients: no client id, name, city or postal code, and no group of fewer than
-- 3 clients (a smaller group would describe one or two bars' purchases).
CREATE VIEW beer.sales_by_beer WITH (security_barrier = true, security_invoker = false) AS
  SELECT p.beer, count(DISTINCT p.client_id) AS clients, count(*) AS purchases, sum(p.quantity) AS total_quantity
    FROM beer.purchases p
   GROUP BY p.beer
  HAVING count(DISTINCT p.client_id) >= 3;

CREATE VIEW beer.sales_by_brewery WITH (security_barrier = true, security_invoker = false) AS
  SELECT p.brewery, count(DISTINCT p.client_id) AS clients, count(*) AS purchases, sum(p.quantity) AS total_quantity
    FROM beer.purchases p
   GROUP BY p.brewery
  HAVING count(DISTINCT p.client_id) >= 3;

CREATE VIEW beer.sales_by_state WITH (security_barrier = true, security_invoker = false) AS
  SELECT c.client_state AS state, count(DISTINCT p.client_id) AS clients, count(*) AS purchases, sum(p.quantity) AS total_quantity
    FROM beer.purchases p JOIN beer.customers c USING (client_id)
   GROUP BY c.client_state
  HAVING count(DISTINCT p.client_id) >= 3;

CREATE VIEW beer.sales_by_state_beer WITH (security_barrier = true, security_invoker = false) AS
  SELECT c.client_state AS state, p.beer, count(DISTINCT p.client_id) AS clients, count(*) AS purchases,
         sum(p.quantity) AS total_quantity
    FROM beer.purchases p JOIN beer.customers c USING (client_id)
   GROUP BY c.client_state, p.beer
  HAVING count(DISTINCT p.client_id) >= 3;

-- US Census regions, so that a state with too few clients still has an answer one level up.
CREATE FUNCTION beer.region_of(state text) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$
    SELECT CASE
      WHEN state IN ('Connecticut', 'Maine', 'Massachusetts', 'New Hampshire', 'Rhode Island', 'Vermont',
                     'New Jersey', 'New York', 'Pennsylvania') THEN 'Northeast'
      WHEN state IN ('Illinois', 'Indiana', 'Michigan', 'Ohio', 'Wisconsin', 'Iowa', 'Kansas', 'Minnesota',
                     'Missouri', 'Nebraska', 'North Dakota', 'South Dakota') THEN 'Midwest'
      WHEN state IN ('Arizona', 'Colorado', 'Idaho', 'Montana', 'Nevada', 'New Mexico', 'Utah', 'Wyoming',
                     'Alaska', 'California', 'Hawaii', 'Oregon', 'Washington') THEN 'West'
      ELSE 'South'
    END
  $$;

CREATE VIEW beer.sales_by_region_beer WITH (security_barrier = true, security_invoker = false) AS
  SELECT beer.region_of(c.client_state) AS region, p.beer, count(DISTINCT p.client_id) AS clients,
         count(*) AS purchases, sum(p.quantity) AS total_quantity
    FROM beer.purchases p JOIN beer.customers c USING (client_id)
   GROUP BY 1, 2
  HAVING count(DISTINCT p.client_id) >= 3;

CREATE VIEW beer.sales_by_month WITH (security_barrier = true, security_invoker = false) AS
  SELECT date_trunc('month', p.purchased_on)::date AS month, count(DISTINCT p.client_id) AS clients,
         count(*) AS purchases, sum(p.quantity) AS total_quantity
    FROM beer.purchases p
   GROUP BY 1
  HAVING count(DISTINCT p.client_id) >= 3;

-- The app: the profile tool and the API's "does this client exist" (both with brigade.client_id set).
GRANT USAGE ON SCHEMA beer TO brigade_app;
GRANT SELECT ON beer.customers, beer.purchases TO brigade_app;
GRANT SELECT ON beer.sales_by_beer, beer.sales_by_brewery, beer.sales_by_state, beer.sales_by_state_beer,
                beer.sales_by_region_beer, beer.sales_by_month TO brigade_app;

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'brigade_beer_sql') THEN
    CREATE ROLE brigade_beer_sql NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
  END IF;
END $$;

-- brigade_app may switch to it (SET LOCAL ROLE) but does not inherit its rights.
GRANT brigade_beer_sql TO brigade_app WITH INHERIT FALSE, SET TRUE;

GRANT USAGE ON SCHEMA beer TO brigade_beer_sql;
GRANT SELECT ON beer.customers, beer.purchases TO brigade_beer_sql;
GRANT SELECT ON beer.sales_by_beer, beer.sales_by_brewery, beer.sales_by_state, beer.sales_by_state_beer,
                beer.sales_by_region_beer, beer.sales_by_month TO brigade_beer_sql;
