export { chatSession } from './chat-session.ts';
export * from '../agents/workflows.ts';
export { retentionSweep } from './retention-sweep.ts';
