import fs from 'node:fs/promises';
import path from 'node:path';
import { ManagedProcess, pollUntil } from './cluster-process.ts';

// The Temporal Web UI of the cluster shape: temporalio/ui-server (the same server and embedded assets that the
// `temporal` CLI serves for its dev server, and that the temporalio/ui image runs), pointed at the cluster's
// frontend. Offline: the assets are in the Go module.

const HOST = '127.0.0.1';

export interface UiServerOptions {
  binary: string;
  dir: string;
  port: number;
  temporalAddress: string;
  namespace: string;
  /** origins allowed to call the UI's API from a browser (the API's own address) */
  corsOrigins?: string[];
  /** Brigade's codec server (`<api>/codec`), which the UI asks to decode payloads with its own access token */
  codecEndpoint?: string;
  log?: (line: string) => void;
  onUnexpectedExit?: (reason: string) => void;
}

export function uiServerConfig(
  opts: Pick<UiServerOptions, 'port' | 'temporalAddress' | 'namespace' | 'corsOrigins' | 'codecEndpoint'>,
): string {
  const q = (value: string) => JSON.stringify(value);
  const origins = opts.corsOrigins ?? [];
  // passAccessToken: the UI sends its own OpenID access token, which the codec server checks like any bearer
  // token (operator role). No credentials: the codec server takes no cookie (issue 42). A UI without a sign-in
  // of its own (auth below) has no token to pass: the CLI with an operator's key reads payloads instead.
  const codec = opts.codecEndpoint
    ? `codec:
  endpoint: ${q(opts.codecEndpoint)}
  passAccessToken: true
  includeCredentials: false
`
    : '';
  return `# Written by Brigade's cluster shape (stack/ui-server.ts) at every start; edits are lost.
temporalGrpcAddress: ${q(opts.temporalAddress)}
host: ${q(HOST)}
port: ${opts.port}
enableUi: true
defaultNamespace: ${q(opts.namespace)}
showTemporalSystemNamespace: false
notifyOnNewVersion: false
refreshInterval: "1m"
cors:
  cookieInsecure: true
  allowOrigins: ${origins.length ? `[${origins.map(q).join(', ')}]` : '[]'}
auth:
  enabled: false
${codec}`;
}

export async function uiServerProcess(opts: UiServerOptions): Promise<{ process: ManagedProcess; url: string }> {
  const configDir = path.join(opts.dir, 'config');
  await fs.mkdir(configDir, { recursive: true });
  await fs.writeFile(path.join(configDir, 'cluster.yaml'), uiServerConfig(opts));
  const url = `http://${HOST}:${opts.port}`;
  const process_ = new ManagedProcess({
    name: 'temporal-ui',
    command: opts.binary,
    args: ['--root', opts.dir, '--config', 'config', '--env', 'cluster', 'start'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    log: opts.log,
    onUnexpectedExit: opts.onUnexpectedExit,
    startTimeoutMs: 30_000,
    stopTimeoutMs: 5_000,
    ready: ({ exited }) =>
      pollUntil(
        async () => {
          if (exited()) return false;
          // The UI's own API, through to the frontend: the page would show the same.
          const response = await fetch(`${url}/api/v1/namespaces/${encodeURIComponent(opts.namespace)}/workflows?query=`);
          if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
          return true;
        },
        { timeoutMs: 30_000, what: `the Web UI on ${url}` },
      ),
  });
  return { process: process_, url };
}
