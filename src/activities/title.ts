// A conversation's title made from its first exchange by the task model (offline: the first words of the
// person's message), so the list does not fill with "<agent> conversation". Generic: it reads only the text.
import { BudgetSpent } from './usage-meter.ts';
import type pg from 'pg';
import { writeBatch } from '../db/batch.ts';
import { replaceDefaultTitle } from '../db/conversations.ts';
import { asUser } from '../db/pool.ts';
import type { TaskModel } from '../model/task-model.ts';
import { TITLE_TASK, titlePrompt } from '../model/title-task.ts';
import { isStorableText, plainText } from '../shared/safe-text.ts';
import type { TitleInput } from './runtime-types.ts';

/** The model's answer as a title: one line, no quotes or markdown, not too long; undefined when nothing is left. */
const MAX_TITLE = 60;

export function cleanTitle(text: string): string | undefined {
  const line = text.split('\n').find((candidate) => plainText(candidate)) ?? '';
  // text that cannot be stored is no title; bidi, zero-width and control characters are taken out (safe-text.ts)
  if (!isStorableText(line)) return undefined;
  let title = plainText(line)
    .replace(/[*_#`]/g, '')
    .replace(/^\s*title\s*:\s*/i, '')
    .replace(/^["'“”‘’]+|["'“”‘’]+$/g, '')
    .replace(/[.\s]+$/, '')
    .trim();
  if (title.length > MAX_TITLE) title = `${title.slice(0, MAX_TITLE - 1).replace(/\s+\S*$/, '')}…`;
  if (!title) return undefined;
  return title[0]!.toUpperCase() + title.slice(1);
}

export function createTitleConversation({ pool, taskModel }: { pool: pg.Pool; taskModel: TaskModel }) {
  return async function titleConversation({
    conversationId,
    userId,
    defaultTitle,
    said,
    answered,
  }: TitleInput): Promise<string | undefined> {
    let reply;
    try {
      // metered like every model call (the usage ledger): the title is the conversation's cost too
      reply = await taskModel.complete({
        // nothing is generated for a conversation over its budget: over it, the title stays the default
        charge: { userId, conversationId, key: `title:${conversationId}`, conversationBudget: true },
        task: TITLE_TASK,
        prompt: titlePrompt(said, answered),
      });
    } catch (error) {
      // over a budget the conversation keeps the title it has: no title is worth a budget item
      if (error instanceof BudgetSpent) return undefined;
      throw error;
    }
    // what a model returns is hostile input: only a short plain line becomes a title
    const title = cleanTitle(reply.text);
    if (!title) return undefined;
    return asUser(pool, userId, async (db) => {
      if (!(await replaceDefaultTitle(db, conversationId, defaultTitle, title))) return undefined;
      await writeBatch(
        db,
        { conversationId, userId },
        { events: [{ key: `title:first-exchange`, type: 'title.changed', data: { title } }] },
      );
      return title;
    });
  };
}
