-- The beer finder's website summaries: a cache shared by every conversation, keyed by the normalized
-- brewery name and URL (one row per brewery, replaced when stale, never duplicated). It holds public
-- facts about breweries and the grounding that produced them; no client data, so no row-level security.
CREATE TABLE beer_website_summaries (
  name_key          text NOT NULL,
  url_key           text NOT NULL,
  brewery_name      text NOT NULL,
  url               text NOT NULL,
  summary           text NOT NULL,
  grounding_queries jsonb NOT NULL DEFAULT '[]',
  source_count      integer NOT NULL DEFAULT 0,
  model             text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name_key, url_key)
);

GRANT SELECT, INSERT, UPDATE ON beer_website_summaries TO brigade_app;
