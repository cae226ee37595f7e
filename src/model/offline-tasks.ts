// The offline model's one-shot tasks, images and structured chat answers, from each agent's
// AgentServer.offline: without a GEMINI_API_KEY every pipeline still runs end to end, deterministically,
// and says it is offline.
import { OFFLINE_NAME, type OfflineAgents, type OfflineImage, type OfflineStructured, type OfflineTask } from './offline-types.ts';
import type { TaskModel } from './task-model.ts';
import { TITLE_TASK, offlineTitle } from './title-task.ts';
import { SUMMARY_TASK, offlineSummary } from './summary-task.ts';

export { OFFLINE_NAME, OFFLINE_PREFIX } from './offline-types.ts';
export type { OfflineAgents, OfflineImage, OfflineStructured, OfflineTask } from './offline-types.ts';

/** tasks of the generic layers, which no agent teaches (a summary words results as the agents read them) */
const generic = (agents: OfflineAgents): Record<string, OfflineTask> => ({
  [TITLE_TASK]: offlineTitle,
  [SUMMARY_TASK]: (request) => offlineSummary(request, agents),
});
const taskOf = (agents: OfflineAgents, name: string): OfflineTask | undefined => {
  const own = generic(agents);
  return (
    (Object.hasOwn(own, name) ? own[name] : undefined) ??
    agents.servers.find((server) => server.offline?.tasks?.[name])?.offline?.tasks?.[name]
  );
};
const imageOf = ({ servers }: OfflineAgents, name: string): OfflineImage | undefined =>
  servers.find((server) => server.offline?.images?.[name])?.offline?.images?.[name];

/** The structured answer of the agent named `name` (a stateful agent's output is named after it). */
export function offlineStructured({ servers }: OfflineAgents, name: string): OfflineStructured | undefined {
  return servers.find((server) => server.name === name)?.offline?.structured;
}

export function createOfflineTaskModel(agents: OfflineAgents): TaskModel {
  return {
    name: OFFLINE_NAME,
    offline: true,
    async complete(request) {
      const answerOf = taskOf(agents, request.task);
      if (!answerOf) throw new Error(`The offline model has no task "${request.task}"`);
      const answer = answerOf(request);
      const reply = typeof answer === 'string' ? { text: answer } : answer;
      const inputTokens = Math.ceil(request.prompt.length / 4);
      const outputTokens = Math.ceil(reply.text.length / 4);
      return { ...reply, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }, model: OFFLINE_NAME };
    },
    async image(request) {
      const image = imageOf(agents, request.task);
      if (!image) throw new Error(`The offline model has no image task "${request.task}"`);
      return { ...image(request), model: OFFLINE_NAME };
    },
  };
}
