import { useEffect, useState } from 'react';

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
