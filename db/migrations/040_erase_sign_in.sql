-- Erasure of a person (035) reaches the sign-in tables (033, 034): their users row, and with it (ON DELETE
-- CASCADE) their API keys and web sessions. The app has no rights on users, so it goes through this function,
-- which acts only for the user the transaction acts for. Returns how many keys and sessions went with it.
CREATE FUNCTION brigade_erase_sign_in(p_user text) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
DECLARE
  acting text := public.brigade_act_for(p_user);
  keys integer;
  sessions integer;
BEGIN
  SELECT count(*) INTO keys FROM public.api_keys WHERE user_id = acting;
  SELECT count(*) INTO sessions FROM public.web_sessions WHERE user_id = acting;
  DELETE FROM public.users WHERE user_id = acting;
  RETURN keys + sessions;
END $$;
REVOKE EXECUTE ON FUNCTION brigade_erase_sign_in(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_erase_sign_in(text) TO brigade_app;
