-- A query a model wrote runs with temp_file_limit lowered for its transaction (src/sql/execute.ts), so a
-- sort or hash that spills cannot fill the disk. temp_file_limit is a superuser setting; brigade_app
-- sets it before it switches to the model's role, which may not set it back up (the role is no
-- superuser, has no such grant, and may not call set_config: migration 013).
GRANT SET ON PARAMETER temp_file_limit TO brigade_app;
