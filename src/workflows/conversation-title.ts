// The title made from the first exchange, detached: the person has the reply without waiting for it.
import { log } from '@temporalio/workflow';
import type { ChatMessage, ChatSessionInput } from '../shared/messages.ts';
import { describeError } from '../shared/log-safe.ts';
import type { SessionActivities } from './session-activities.ts';

export async function nameConversation(
  titles: SessionActivities['titles'],
  { conversationId, userId, title }: Pick<ChatSessionInput, 'conversationId' | 'userId' | 'title'>,
  said: string,
  messages: ChatMessage[],
): Promise<void> {
  const answered = messages
    .filter((m) => m.role === 'assistant' && m.text)
    .map((m) => m.text)
    .join('\n');
  try {
    await titles.titleConversation.executeWithOptions({ summary: 'title from the first exchange' }, [
      { conversationId, userId, defaultTitle: title, said, answered },
    ]);
  } catch (error) {
    log.warn('The conversation keeps its default title', { conversationId, reason: describeError(error) });
  }
}
