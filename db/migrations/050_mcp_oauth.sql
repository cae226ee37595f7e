-- Issue 47: MCP servers behind OAuth, connected by each person for themselves. A person's tokens for a server
-- are one row, sealed (AES-256-GCM) under the person's own data key (041_person_data_keys.sql): erasure destroys
-- that key first, so a copy of this table (a backup, the WAL) opens for nobody afterwards, and then deletes the
-- rows. The app sees its own rows only (RLS, as the other per-person tables); the worker acts for a
-- conversation's owner (brigade.user_id) when it reads or refreshes them.
CREATE TABLE mcp_oauth_tokens (
  user_id      text NOT NULL,
  server       text NOT NULL,
  -- the person's data key the row is sealed under (person:<uuid>), never the key itself
  key_id       text NOT NULL,
  -- iv (12) || AES-256-GCM(JSON of the tokens) || tag (16), associated data: user id, server, key id
  sealed       bytea NOT NULL,
  -- when the access token expires (null: the server did not say); not secret, so the worker can refresh in time
  expires_at   timestamptz,
  -- the scope a call was refused for (insufficient_scope): the person's next Connect asks for it
  wanted_scope text,
  -- the authorization server refused the refresh (invalid_grant): the person connects again
  refresh_failed_at timestamptz,
  -- where discovery found the authorization server (RFC 9728, RFC 8414): public metadata, not a secret
  discovery    jsonb,
  connected_at timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, server)
);
ALTER TABLE mcp_oauth_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON mcp_oauth_tokens USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_oauth_tokens TO brigade_app;

-- An authorization the person started (POST /v1/mcp/servers/{name}/connect) and has not finished: found by the
-- digest of its state, by the same person only (RLS), once (the callback deletes it), within its expiry. The PKCE
-- verifier stays here, sealed like the tokens, and never reaches the browser.
CREATE TABLE mcp_oauth_pending (
  state_digest bytea PRIMARY KEY,
  user_id      text NOT NULL,
  server       text NOT NULL,
  key_id       text NOT NULL,
  -- iv || AES-256-GCM(JSON: the PKCE verifier) || tag, associated data: user id, server, key id
  sealed       bytea NOT NULL,
  discovery    jsonb,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX mcp_oauth_pending_person ON mcp_oauth_pending (user_id, server);
ALTER TABLE mcp_oauth_pending ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON mcp_oauth_pending USING (user_id = brigade_current_user()) WITH CHECK (user_id = brigade_current_user());
GRANT SELECT, INSERT, DELETE ON mcp_oauth_pending TO brigade_app;

-- Brigade's own registration with an authorization server (dynamic client registration, RFC 7591), one per server
-- and issuer, shared by everyone who connects that server: the client, not a person.
CREATE TABLE mcp_oauth_clients (
  server      text NOT NULL,
  issuer      text NOT NULL,
  information jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (server, issuer)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_oauth_clients TO brigade_app;
