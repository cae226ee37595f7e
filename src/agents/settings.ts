// The agents' own settings, one line per agent that has any; the process configuration (src/config.ts)
// reads them with the runtime's, so a bad value is named at start like any other.
import { beerSettings } from './beer/settings.ts';

export const AGENT_SETTINGS = {
  ...beerSettings,
};
