import { useState } from 'react';

// A recipe image's address as the app makes it: /files/recipes/<uuid>.png on the API (the local store),
// or an object recipes/<uuid>.png in the image bucket (its public URL, or an emulator's download URL).
const LOCAL_IMAGE = /^\/files\/recipes\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.png$/;
const BUCKET_IMAGE = /recipes(\/|%2F)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.png(\?alt=media)?$/;

/** The URL to show, or undefined for an address the app did not produce (decided on the parsed URL). */
export function recipeImageUrl(src: string): string | undefined {
  let url: URL;
  try {
    url = new URL(src, window.location.href);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return undefined;
  const local = url.pathname.match(LOCAL_IMAGE) && !url.search && !url.hash;
  const bucket = BUCKET_IMAGE.test(url.pathname + url.search) && !url.hash;
  return local || bucket ? url.href : undefined;
}

/**
 * A recipe's image. Images need no bearer token (their names are unguessable), so none is ever sent with
 * one; an address the app did not produce, or an image that fails to load, shows as "no image".
 */
export function RecipeImage({ src, alt }: { src: string | null | undefined; alt: string }) {
  const [failed, setFailed] = useState(false);
  const url = src ? recipeImageUrl(src) : undefined;
  if (!url || failed)
    return (
      <div className="img-missing" role="img" aria-label={`${alt} (no image)`}>
        no image
      </div>
    );
  return <img src={url} alt={alt} loading="lazy" referrerPolicy="no-referrer" onError={() => setFailed(true)} />;
}
