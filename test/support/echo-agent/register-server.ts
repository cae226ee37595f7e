// Registers the echo agent in this process (spec and server side), before createApp and createWorker.
import { AGENT_SERVERS, registerAgentServer } from '../../../src/agents/server-registry.ts';
import './register.ts';
import { echoServer } from './server.ts';

if (!AGENT_SERVERS.has(echoServer.name)) registerAgentServer(echoServer);
