// The support agent: customers and orders, for tokens with the support role; cancelling an
// order or changing a contact waits for a person's approval.
import { defineAgent } from '../../shared/agent-spec.ts';
import { supportTools } from './tools.ts';

export const supportAgent = defineAgent({ name: 'support', tools: supportTools, requiredRole: 'support' });
