// How a call's activity puts an elicitation to the user: it signals the conversation (`mcpQuestion`), which
// opens a pending `question`, and polls `mcpAnswer` until the item is decided, answered by a message, or
// expired. The signal and the answers live in the workflow, so a decision survives a worker restart like any
// other; the activity heartbeats while it waits.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { McpQuestionAnswer, McpQuestionRequest } from './types.ts';

export const mcpQuestionSignal = defineSignal<[McpQuestionRequest]>('mcpQuestion');
export const mcpAnswerQuery = defineQuery<McpQuestionAnswer | null, [string]>('mcpAnswer');
