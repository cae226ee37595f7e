// A tool result's sources as the page shows them (issue 29): a result is hostile input, so a link needs a tool
// that declares sources and an https: address, and its host is always in view.

/**
 * Where a source may be opened: an https: URL, from a tool that declares sources (GET /v1/meta). Anything else
 * (another scheme, a tool that declares none, an MCP server's result) is shown as text, never as a link.
 */
export function sourceLink(raw: unknown, linkable: boolean): { href?: string; host?: string } {
  if (typeof raw !== 'string') return {};
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return {};
  }
  if (url.protocol !== 'https:' || !url.hostname) return { host: url.hostname || undefined };
  return linkable ? { href: url.href, host: url.hostname } : { host: url.hostname };
}
