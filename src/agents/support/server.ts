// The support agent in the server processes: its tools' implementations.
import { defineAgentServer } from '../../agent-server.ts';
import { supportImplementations } from './implementations.ts';
import { supportOffline } from './offline.ts';
import { supportReadings } from './offline-readings.ts';

export const supportServer = defineAgentServer({
  name: 'support',
  implementations: supportImplementations,
  offline: { ...supportOffline, describe: supportReadings },
});
