// Connecting an MCP server behind OAuth for the signed-in person (issue 47): Connect asks Brigade for the
// authorization URL and leaves for the provider's consent page; the provider sends the browser back to Brigade's
// /mcp/oauth/callback, which returns here with code and state in the fragment (#mcp-oauth?…), and this page hands
// them to the API with its own credentials. Where to come back to is kept in this tab's session storage.
import { api } from './api';

const RETURN_KEY = 'brigade.mcp-return';

export interface McpServerStatus {
  name: string;
  auth: 'none' | 'oauth';
  perPerson: boolean;
  connected?: boolean;
  expired?: boolean;
  wantedScope?: string;
  agents: string[];
}

export const listMcpServers = () => api<{ servers: McpServerStatus[] }>('GET', '/v1/mcp/servers').then((body) => body.servers);

/** Leaves for the provider's consent page; this page comes back to where it is now. */
export async function startConnect(server: string): Promise<void> {
  const { authorizationUrl } = await api<{ authorizationUrl: string }>('POST', `/v1/mcp/servers/${encodeURIComponent(server)}/connect`);
  sessionStorage.setItem(RETURN_KEY, window.location.pathname);
  window.location.assign(authorizationUrl);
}

export const disconnect = (server: string) =>
  api<{ disconnected: boolean; revoked: boolean }>('DELETE', `/v1/mcp/servers/${encodeURIComponent(server)}/connection`);

/** The provider's answer in the fragment, taken out of the address bar; and where the person was when they pressed Connect. */
export function takeMcpCallback(): { query: string; returnTo: string } | undefined {
  const match = /^#mcp-oauth\?(.*)$/.exec(window.location.hash);
  if (!match) return undefined;
  history.replaceState(null, '', window.location.pathname + window.location.search);
  const returnTo = sessionStorage.getItem(RETURN_KEY) ?? '/';
  sessionStorage.removeItem(RETURN_KEY);
  return { query: match[1]!, returnTo: returnTo.startsWith('/') && !returnTo.startsWith('//') ? returnTo : '/' };
}

/** Said on `window` when the person's connections changed, so what shows them asks again. */
export const MCP_CHANGED = 'brigade:mcp-changed';

export async function finishConnect(query: string): Promise<{ server: string; connected: true }> {
  const done = await api<{ server: string; connected: true }>('GET', `/v1/mcp/oauth/callback?${query}`);
  window.dispatchEvent(new Event(MCP_CHANGED));
  return done;
}
