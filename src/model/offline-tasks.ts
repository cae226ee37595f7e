// The offline model's one-shot tasks, images and structured chat answers, from each agent's
// AgentServer.offline: without a GEMINI_API_KEY every pipeline still runs end to end, deterministically,
// and says it is offline.
import { AGENT_SERVERS } from '../agents/server-registry.ts';
import { OFFLINE_NAME, type OfflineImage, type OfflineStructured, type OfflineTask } from './offline-types.ts';
import type { TaskModel } from './task-model.ts';
import { TITLE_TASK, offlineTitle } from './title-task.ts';

export { OFFLINE_NAME, OFFLINE_PREFIX } from './offline-types.ts';
export type { OfflineImage, OfflineStructured, OfflineTask } from './offline-types.ts';

const servers = () => [...AGENT_SERVERS.values()];
/** tasks of the generic layers, which no agent teaches */
const GENERIC: Record<string, OfflineTask> = { [TITLE_TASK]: offlineTitle };
const task = (name: string): OfflineTask | undefined =>
  (Object.hasOwn(GENERIC, name) ? GENERIC[name] : undefined) ??
  servers().find((server) => server.offline?.tasks?.[name])?.offline?.tasks?.[name];
const image = (name: string): OfflineImage | undefined =>
  servers().find((server) => server.offline?.images?.[name])?.offline?.images?.[name];

/** The structured answer of the agent named `name` (a stateful agent's output is named after it). */
export function offlineStructured(name: string): OfflineStructured | undefined {
  return AGENT_SERVERS.get(name)?.offline?.structured;
}

export function createOfflineTaskModel(): TaskModel {
  return {
    name: OFFLINE_NAME,
    offline: true,
    async complete(request) {
      const answerOf = task(request.task);
      if (!answerOf) throw new Error(`The offline model has no task "${request.task}"`);
      const answer = answerOf(request);
      const reply = typeof answer === 'string' ? { text: answer } : answer;
      const inputTokens = Math.ceil(request.prompt.length / 4);
      const outputTokens = Math.ceil(reply.text.length / 4);
      return { ...reply, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }, model: OFFLINE_NAME };
    },
    async image(request) {
      const imageOf = image(request.task);
      if (!imageOf) throw new Error(`The offline model has no image task "${request.task}"`);
      return { ...imageOf(request), model: OFFLINE_NAME };
    },
  };
}
