export { chatSession } from './chat-session.ts';
