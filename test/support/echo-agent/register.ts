// Registers the echo agent's spec: imported by the test workflow bundle's entry and by the test process
// before the API and the worker start (the registry line of a built-in agent does this at load).
import { isAgentName, registerAgent } from '../../../src/agents/registry.ts';
import { echoAgent } from './spec.ts';

if (!isAgentName(echoAgent.name)) registerAgent(echoAgent);
