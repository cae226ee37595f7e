// The runtime's activity signatures, imported as types by the workflow (no code crosses into the bundle).
import type { ToolDeclaration } from '../model/types.ts';
import type { AgentName, ChatMessage, JsonObject, NewEvent } from '../shared/messages.ts';
import type { BudgetAllowance, BudgetExceeded, StoppedStep } from '../shared/turn-control.ts';

import type { ConversationRef } from '../shared/conversation-ref.ts';

export type { ConversationRef };

export interface ModelStepInput extends ConversationRef {
  agent: AgentName;
  /** also the id of the assistant message it writes, so a retry finds its own earlier answer */
  stepId: string;
  /** written before the transcript is read: the user message, refused tool calls, events */
  messages: ChatMessage[];
  events: NewEvent[];
  /** a stateful agent's structured context for the model (its kernel's context()) */
  context?: JsonObject;
  /**
   * Lets the step run the tools a reply calls when none needs the workflow (src/shared/inline-tools.ts) and
   * ask the model again, up to `extraSteps` more times: a turn's tool rounds then cost no workflow task each.
   */
  inline?: { extraSteps: number; client?: string };
  /** when the step's turn began (workflow time, ms): a Stop asked for after it stops the step */
  turnStartedAt?: number;
  /** budget approvals so far; absent: none (the limits themselves are the worker's settings) */
  budget?: BudgetAllowance;
  /** tools from MCP servers, offered beside the agent's own (the list the workflow recorded) */
  mcpTools?: ToolDeclaration[];
  /**
   * attempts made before this activity began (a step whose worker let it go, run again): its deltas go on from
   * them, so that clients replace the earlier draft
   */
  attemptBase?: number;
  /** the step answers again a message answered before (a regenerate): the model is given a seed of its own */
  regenerate?: boolean;
}

export interface StepUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface ModelStepResult {
  /** the last reply: the workflow handles its tool calls, if any (with overBudget: empty, not in the transcript) */
  message: ChatMessage;
  /** what the step did before it (replies and the results of the tools it ran), in transcript order */
  before?: ChatMessage[];
  /** the sum over every model call of the step */
  usage: StepUsage;
  /** a budget was spent before the step's next model call, which it did not make */
  overBudget?: BudgetExceeded;
  /**
   * A Stop's notice reached the step before the workflow did (it runs within the workflow task, which the
   * Stop waits for): what it wrote before it let go. `message` is then empty and not in the transcript.
   */
  interrupted?: StoppedStep;
  /**
   * The step outran its workflow task and goes on in this worker (src/activities/step-handoff.ts): the workflow
   * follows it with followModelStep on `taskQueue`. `message` is then empty; `attempt` is the attempt handed off.
   */
  handedOff?: { taskQueue: string; key: string; attempt: number };
  /** the previews of the reply's calls that will ask a person, by call id (PendingItem.preview) */
  previews?: Record<string, JsonObject>;
  /**
   * The step's window passed its threshold (src/context/window.ts): the workflow folds the conversation's older
   * messages, through this one, into a summary once the turn has answered (compactConversation).
   */
  compactThrough?: string;
}

/** The activity that follows a handed-off model step, on the worker's own task queue. */
export interface StepFollowActivities {
  followModelStep(key: string): Promise<ModelStepResult>;
}

export interface RunToolInput extends ConversationRef {
  agent: AgentName;
  client?: string;
  callId: string;
  tool: string;
  args: JsonObject;
}

export interface RecordInput extends ConversationRef {
  messages: ChatMessage[];
  events: NewEvent[];
}

export interface MoveLeafInput extends ConversationRef {
  /** where the leaf goes (null: the root, before a first message) */
  messageId: string | null;
  /** to the newest message under messageId (a branch switch) rather than messageId itself */
  descend: boolean;
  reason: 'edit' | 'regenerate' | 'switch';
  /** the move's key: its event is written once */
  key: string;
  /** also read the state a stateful agent kept with the new path's last answer (agent.state) */
  withState?: boolean;
}

export interface LeafMoved {
  leafId: string | null;
  /** the kept state, when asked for and one was kept on the path */
  state?: { value: unknown };
}

export interface TitleInput extends ConversationRef {
  /** the title the conversation started with: only that one is replaced */
  defaultTitle: string;
  /** the person's first message and the agent's first reply */
  said: string;
  answered: string;
}

export interface CompactInput extends ConversationRef {
  agent: AgentName;
  /** the last message the summary folds (a step's compactThrough) */
  throughMessageId: string;
}

export interface RuntimeActivities {
  modelStep(input: ModelStepInput): Promise<ModelStepResult>;
  runTool(input: RunToolInput): Promise<unknown>;
  record(input: RecordInput): Promise<void>;
  /** moves the conversation's leaf and says so in an event; returns the new leaf (src/activities/branch.ts) */
  moveLeaf(input: MoveLeafInput): Promise<LeafMoved>;
  /** the conversation's title from its first exchange; undefined when it kept its title */
  titleConversation(input: TitleInput): Promise<string | undefined>;
  /** folds the conversation's messages through `throughMessageId` into a summary, once (src/activities/compaction.ts) */
  compactConversation(input: CompactInput): Promise<{ written: boolean; skipped?: string }>;
}
