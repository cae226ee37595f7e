// What a sous conversation's view adds beside the generic fields (the API's SousViewFields, top level).
import type { ConversationView } from '../../types.ts';

export interface SousRecipe {
  title?: string;
  version?: number;
  servings?: number;
  ingredients?: { id: string; text: string }[];
  steps?: { id: string; text: string; status?: string }[];
  notes?: string[];
}

export interface SousView {
  recipe?: SousRecipe;
  defaults?: Record<string, unknown>;
  /** hard avoids the person lifted for this recipe in this conversation */
  hardAvoidOverrides?: string[];
  /** the PatchSet waiting for review, null when none waits */
  pendingPatchSet?: unknown;
  /** PatchSets accepted in this conversation: above 0, the recipe can be saved as a changed version */
  acceptedChanges: number;
}

export function sousViewOf(view: ConversationView): SousView {
  return {
    recipe: view.recipe as SousRecipe | undefined,
    defaults: view.defaults as Record<string, unknown> | undefined,
    pendingPatchSet: view.pendingPatchSet,
    hardAvoidOverrides: Array.isArray(view.hardAvoidOverrides) ? (view.hardAvoidOverrides as string[]) : [],
    acceptedChanges: typeof view.acceptedChanges === 'number' ? view.acceptedChanges : 0,
  };
}
