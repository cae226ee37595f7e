// npm run lint:openapi: writes the OpenAPI document the API serves to a temporary file and lints it with
// Redocly's recommended rules (redocly.yaml). Offline: no telemetry, no update check, no remote $ref.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../../src/api/openapi.ts';
import { builtInCatalog } from '../../src/agents/catalog.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'brigade-openapi-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(openApiDocument(builtInCatalog()), null, 2));
  const { status, error } = spawnSync(
    process.execPath,
    [join(root, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', '--config', join(root, 'redocly.yaml'), '--format', 'stylish', file],
    {
      stdio: 'inherit',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
    },
  );
  if (error) throw error;
  process.exitCode = status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
