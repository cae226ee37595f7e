// A run's end: once the server suggests it (or the run's turn limit is reached, or a newer worker version is
// current) and no turn or handler is running, the conversation continues as new with what it counted.
import { allHandlersFinished, condition, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import { CHAT_SESSION_TASK_TIMEOUT } from '../shared/definitions.ts';
import type { ChatSessionInput } from '../shared/messages.ts';
import { handOn, mayContinueAsNew } from './history.ts';
import type { Session } from './session.ts';

/** chatSession's signature: the next run is of the same workflow type */
type ChatSession = (input: ChatSessionInput) => Promise<void>;

export async function continueWhenDue({ input, loop, events, pending, kernel, agentState }: Session): Promise<void> {
  await condition(() =>
    mayContinueAsNew({
      // a held message is the next turn's: the run goes on to it (absent in runs recorded before it)
      turnActive: loop.active || loop.held !== undefined,
      allHandlersFinished,
      suggested: () => workflowInfo().continueAsNewSuggested,
      turnsThisRun: loop.turnsThisRun,
      afterTurns: input.settings.continueAsNewAfterTurns,
      upgradable: () => workflowInfo().targetWorkerDeploymentVersionChanged,
    }),
  );
  await events.flush();
  // A pinned run would hand its pin on to the next one: moving to the current version is asked for explicitly.
  const next = workflowInfo().targetWorkerDeploymentVersionChanged
    ? makeContinueAsNewFunc<ChatSession>({ initialVersioningBehavior: 'AUTO_UPGRADE', workflowTaskTimeout: CHAT_SESSION_TASK_TIMEOUT })
    : makeContinueAsNewFunc<ChatSession>({ workflowTaskTimeout: CHAT_SESSION_TASK_TIMEOUT });
  await next({
    ...input,
    carried: handOn({
      turns: loop.turns,
      usage: loop.usage,
      rejectedSignals: events.rejectedSignals,
      closed: pending.closedItems(),
      budgetRaises: loop.budgetRaises,
      ...(kernel ? { agent: { state: agentState.state, openItems: pending.items() } } : {}),
    }),
  });
}
