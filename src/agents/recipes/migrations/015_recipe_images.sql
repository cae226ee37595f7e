-- Recipe images (issue 17). image_url is the app's to write: the save pipeline sets it to the address
-- its object store gives the recipe's image, and nothing else may. SQL a model writes could point it at
-- any host (an injected instruction's), where a browser would send what it sends to images. So the
-- role that runs that SQL loses UPDATE on the column; the API also shows only the address the app
-- itself produces for the recipe (src/api/recipes.ts).
REVOKE UPDATE (image_url) ON saved_recipes FROM brigade_recipes_sql;

-- The image route (/files/recipes/<id>.png) has no bearer token (an <img> sends none) and so no user
-- for row-level security: this answers only whether the recipe of an image exists and is not deleted,
-- nothing else about it, so a soft-deleted recipe's image stops being served and comes back with it.
CREATE FUNCTION brigade_recipe_image_live(p_recipe uuid) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$ SELECT EXISTS (SELECT 1 FROM public.saved_recipes WHERE id = p_recipe AND NOT is_deleted) $$;
REVOKE EXECUTE ON FUNCTION brigade_recipe_image_live(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brigade_recipe_image_live(uuid) TO brigade_app;
