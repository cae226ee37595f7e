// The support agent in the server processes: its tools' implementations and its approvals' previews.
import { defineAgentServer } from '../../api/agent-server.ts';
import { supportAgent } from './spec.ts';
import { supportImplementations } from './implementations.ts';
import { supportOffline } from './offline.ts';
import { supportPreviews } from './previews.ts';
import { supportReadings } from './offline-readings.ts';

export const supportServer = defineAgentServer({
  name: 'support',
  spec: supportAgent,
  bundle: { spec: new URL('./spec.ts', import.meta.url), specExport: 'supportAgent' },
  migrations: new URL('./migrations/', import.meta.url),
  implementations: supportImplementations,
  previews: supportPreviews,
  offline: { ...supportOffline, describe: supportReadings },
});
