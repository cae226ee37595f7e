-- Titles people and the first exchange give a conversation (issue 36): PATCH /v1/conversations/{id} renames
-- it, and the title activity replaces the default title after the first exchange. The app may change the
-- title column only; row-level security (own_rows) already limits any UPDATE to the acting user's rows.
GRANT UPDATE (title) ON conversations TO brigade_app;
