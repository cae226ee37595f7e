// What an agent's home (web/src/agents/<agent>/) may give the web client. Generic code asks the registry
// (agents/registry.ts) for these by agent name, pending kind or card type, and renders something generic
// when no home gives one; so the client never tests an agent's name or guesses another agent's shapes.
import type { ComponentType, ReactNode } from 'react';
import type { ConversationView, JsonSchema, PendingItem, PendingKind } from './types';

/** Generative UI on a message, told apart by its `type`. */
export type Card = Record<string, unknown>;

/** Sends a decision on a pending item; rejects with the API's error. */
export type Decide = (body: Record<string, unknown>) => Promise<void>;

export interface PendingViewProps {
  item: PendingItem;
  onDecide: Decide;
  /** the agent whose item it is, so its home can word the tool */
  agent?: string;
  /** the declared arguments of the item's tool, when the API lists them */
  schema?: JsonSchema;
}

export interface PendingKindHome {
  View: ComponentType<PendingViewProps>;
  /** how the transcript names an item of this kind where it opened */
  label: string;
  /**
   * false when a message does not answer an item of this kind, so a message held during a turn is sent
   * while one waits (a PatchSet waits for review while the chat goes on); absent means it does.
   */
  answeredByMessage?: boolean;
}

export interface SidePanelProps {
  view: ConversationView;
  /** the agent's state changed from the panel: the page reloads the view */
  onChanged: () => void;
}

/** Fields of the "Start a conversation" form only this agent asks for, and what they add to the request. */
export interface AgentStart {
  Fields: ComponentType<{ values: Record<string, string>; onChange: (values: Record<string, string>) => void }>;
  body(values: Record<string, string>): Record<string, unknown>;
}

/**
 * How a person chooses the client (a bar) a new conversation acts for, where the token has none of its own:
 * it renders its own labelled control and reports the client's id (the generic form offers a text field).
 */
export type ClientPicker = ComponentType<{ value: string; onChange: (client: string) => void }>;

/** A page of the agent's own, linked from the top bar. */
export interface AgentPage {
  path: string;
  navLabel: string;
  Page: ComponentType;
}

/** How the transcript words one of the agent's tools for a person (toolWords.ts words any other generically). */
export interface ToolWords {
  /** what the call does, as a short sentence: "Cancel order 13579" */
  call?: (args: Record<string, unknown>) => string;
  /** what came back, as a short sentence; undefined leaves it to the generic words */
  result?: (result: any, args: Record<string, unknown>) => string | undefined;
  /**
   * what came back, laid out to read (a card, a table), shown under the sentence in place of the raw details;
   * undefined leaves the raw details, null says the sentence is all there is. Only a result that is not an
   * error reaches it.
   */
  view?: (result: any, args: Record<string, unknown>) => ReactNode | undefined;
  /**
   * what an approval of the call touches, laid out to read (the order a cancel cancels, current → new values,
   * the recipe as it will be saved), from its arguments and the item's `preview`; shown in the approval card in
   * place of the arguments. undefined leaves the arguments.
   */
  approval?: (args: Record<string, unknown>, preview: Record<string, unknown> | undefined) => ReactNode | undefined;
  /** the same in a few words, for the record of the decision ("Smartphone Case × 2, $19.99, was Processing") */
  approved?: (args: Record<string, unknown>, preview: Record<string, unknown> | undefined) => string | undefined;
}

export interface AgentHome {
  /** the agent's name as people read it */
  label: string;
  /** what the agent does, in a sentence, on its tile of the home page */
  description: string;
  /** what a person might ask first, offered on its tile (absent: the first of `examples`) */
  firstPrompt?: string;
  /** under the conversation's title: who or what it acts for, in words */
  Subtitle?: ComponentType<{ view: ConversationView }>;
  /** shown beside the conversation */
  SidePanel?: ComponentType<SidePanelProps>;
  /** the pending kinds this agent opens and renders itself (approvals are generic: any agent's tool asks) */
  pendingKinds?: Partial<Record<Exclude<PendingKind, 'approval'>, PendingKindHome>>;
  /** renderers of the card types this agent attaches to messages */
  cards?: Record<string, ComponentType<{ card: Card }>>;
  start?: AgentStart;
  clientPicker?: ClientPicker;
  /** what the tab title adds to the conversation's title: who it acts for, in words (undefined: nothing) */
  tabName?: (view: ConversationView) => Promise<string | undefined>;
  pages?: AgentPage[];
  /** the agent's tools in words, by tool name */
  tools?: Record<string, ToolWords>;
  /** what a person might ask first, shown in an empty conversation (phrasings the offline model understands too) */
  examples?: string[];
  /** the same from the conversation's own state, when that decides what fits (absent: `examples`) */
  examplesOf?: (view: ConversationView) => string[];
  /** event types after which the conversation's view (and so this agent's state) has changed */
  refreshOn?: string[];
}
