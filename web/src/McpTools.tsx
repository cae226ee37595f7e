// The agent's MCP servers that each person connects (auth "oauth"), in the conversation's header: "Connect
// <server>" while the person has not (or their sign-in there expired), "Disconnect" once they have. A tool result
// that asks to connect shows the same Connect button (ConnectButton).
import { useCallback, useEffect, useState } from 'react';
import type { ApiError } from './api';
import { MCP_CHANGED, type McpServerStatus, disconnect, listMcpServers, startConnect } from './mcpConnect';

export function ConnectButton({ server, onError }: { server: string; onError?: (message: string) => void }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="secondary connect-server"
      disabled={busy}
      onClick={() => {
        setBusy(true);
        startConnect(server).catch((e: ApiError) => {
          setBusy(false);
          onError?.(e.message);
        });
      }}
    >
      Connect {server}
    </button>
  );
}

export function McpTools({ agent }: { agent: string }) {
  const [servers, setServers] = useState<McpServerStatus[]>([]);
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    listMcpServers()
      .then((all) => setServers(all.filter((server) => server.perPerson && server.agents.includes(agent))))
      .catch(() => setServers([]));
  }, [agent]);
  useEffect(() => {
    load();
    window.addEventListener(MCP_CHANGED, load);
    return () => window.removeEventListener(MCP_CHANGED, load);
  }, [load]);
  if (servers.length === 0) return null;
  return (
    <div className="mcp-tools" role="group" aria-label="Tools to connect">
      {servers.map((server) =>
        server.connected ? (
          <span key={server.name} className="mcp-server connected">
            <span className="chip">{server.name} connected</span>{' '}
            <button
              type="button"
              className="secondary"
              onClick={() => {
                setError(undefined);
                disconnect(server.name)
                  .then(load)
                  .catch((e: ApiError) => setError(e.message));
              }}
            >
              Disconnect {server.name}
            </button>
          </span>
        ) : (
          <span key={server.name} className="mcp-server">
            {server.expired && <span className="muted">Your sign-in at {server.name} expired. </span>}
            <ConnectButton server={server.name} onError={setError} />
          </span>
        ),
      )}
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
    </div>
  );
}
