import { type MouseEvent, useEffect, useState } from 'react';

// Paths: "/" (conversations), "/c/<id>" (one), and the pages agents add (agents/registry.ts). The API's SPA
// fallback serves them all.
export function usePath(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return path;
}

export function navigate(path: string): void {
  if (window.location.pathname === path) return;
  history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/**
 * A link's click handled in the page: a plain left click navigates here; a click with Ctrl, Cmd, Shift or Alt,
 * or with another button, is left to the browser (a new tab or window), as any <a href> does.
 */
export function followLink(event: MouseEvent<HTMLAnchorElement>, path: string, before?: () => void): void {
  if (event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  before?.();
  navigate(path);
}
