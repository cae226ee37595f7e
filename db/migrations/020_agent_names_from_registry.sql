-- Which agents exist is the registry's to say (src/agents/registry.ts), and the API refuses a name it
-- does not list before anything is written; a list here as well would make a new agent a migration too.
-- The column keeps a check on the name's shape only.
ALTER TABLE conversations DROP CONSTRAINT conversations_agent_check;
ALTER TABLE conversations ADD CONSTRAINT conversations_agent_name CHECK (agent ~ '^[a-z][a-z0-9_-]{0,39}$');
