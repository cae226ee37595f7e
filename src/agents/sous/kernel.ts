// The sous agent as a kernel of chatSession (src/shared/agent-kernel.ts): pure functions over SousState.
// The model proposes; this module stamps, validates, reviews, and applies only what the user accepts.
import { z } from 'zod';
import { type AgentKernel, type KernelContext, type KernelEffects, KernelRefusal } from '../../shared/agent-kernel.ts';
import type { DecisionInput, JsonObject, NewEvent, PendingItem } from '../../shared/messages.ts';
import { applyPatchSet } from './apply.ts';
import { buildReview } from './review.ts';
import { type PatchDecision, PatchSet, type Review, SousAnswer } from './schemas.ts';
import { DECISIONS_KEPT, type SousState, initialState } from './state.ts';
import { validatePatchSet } from './validate.ts';

export const PATCHSET_TOOL = 'sous';

/** The pending PatchSet as the kernel put it on its item. */
interface PatchSetDetails {
  patchSet: PatchSet;
  review: Review;
}

const openPatchSets = (items: readonly PendingItem[]) => items.filter((item) => item.kind === 'patchset' && item.tool === PATCHSET_TOOL);
const detailsOf = (item: PendingItem) => item.details as unknown as PatchSetDetails;

function event(ctx: KernelContext, type: NewEvent['type'], data: JsonObject): NewEvent {
  return { key: `${type}:${ctx.newId()}`, type, data };
}

export function sousContext(state: SousState): JsonObject {
  const { recipe, defaults } = state;
  // The one impure line of the kernel, on purpose: the interface hands onAnswer only the answer, so the
  // version the model saw (and whether lastPatchDecision went out) is noted on the state object the
  // workflow holds. It is deterministic (replay does the same), and a state change made while the model
  // thinks (a step marked done) copies the note, so onAnswer stamps the version the model really saw.
  state.seen = { version: recipe.version, ...(state.lastPatchDecision ? { lastPatchDecisionId: state.lastPatchDecision.patchSetId } : {}) };
  return {
    recipeVersion: recipe.version,
    recipe,
    defaults: { hardAvoids: defaults.hardAvoids, portions: defaults.portions },
    ...(state.overrides.length ? { hardAvoidOverrides: state.overrides } : {}),
    decisions: state.decisions.slice(-5).map((d) => ({ patchSetId: d.patchSetId, decision: d.decision, title: d.summary?.title ?? null })),
    // what waits for the user's decision: a new PatchSet would replace it
    pendingPatchSet: state.pending
      ? { patchSetId: state.pending.patchSetId, summary: state.pending.summary ?? null, patches: state.pending.patches }
      : null,
    ...(state.lastPatchDecision ? { llm: { lastPatchDecision: state.lastPatchDecision } } : {}),
  };
}

export function sousView(state: SousState, openItems: readonly PendingItem[]): JsonObject {
  const item = openPatchSets(openItems).at(-1);
  return {
    recipe: state.recipe,
    defaults: state.defaults,
    hardAvoidOverrides: state.overrides,
    decisions: state.decisions.slice(-10),
    pendingPatchSet: item ? { pendingId: item.id, ...detailsOf(item) } : null,
    acceptedChanges: acceptedCount(state),
    ...(state.savedRecipeId ? { savedRecipeId: state.savedRecipeId } : {}),
  };
}

/** Conversations begun before the count was kept count their kept decisions instead. */
const acceptedCount = (state: SousState): number => state.accepted ?? state.decisions.filter((d) => d.decision === 'accepted').length;

export function onSousAnswer(state: SousState, raw: unknown, ctx: KernelContext): KernelEffects<SousState> {
  const answer = SousAnswer.parse(raw);
  const seen = state.seen;
  // lastPatchDecision is cleared once the model answered a request that carried it; one made while the
  // model was thinking has not been sent yet and stays for the next request.
  const sent = seen?.lastPatchDecisionId !== undefined && seen.lastPatchDecisionId === state.lastPatchDecision?.patchSetId;
  const { seen: _seen, lastPatchDecision, ...rest } = state;
  const next: SousState = { ...rest, ...(lastPatchDecision && !sent ? { lastPatchDecision } : {}) };
  const proposed = answer.patchSet;
  if (!proposed) return { state: next };

  const open = openPatchSets(ctx.openItems);
  const taken = new Set([...state.decisions.map((d) => d.patchSetId), ...open.map((item) => detailsOf(item).patchSet.patchSetId)]);
  const patchSetId = taken.has(proposed.patchSetId) ? `ps-${ctx.newId()}` : proposed.patchSetId;
  const baseVersion = seen?.version ?? state.recipe.version;
  const reasons = validatePatchSet({
    recipe: state.recipe,
    defaults: state.defaults,
    patchSet: { ...proposed, baseVersion },
    overrides: state.overrides,
  });
  if (reasons.length) {
    return {
      state: next,
      events: [event(ctx, 'patchset.rejected', { patchSetId, baseVersion, reasons, patches: proposed.patches })],
      say: [`The proposed change was refused before review and nothing changed: ${reasons.join('; ')}.`],
    };
  }
  const review = buildReview(state.recipe, proposed);
  const patchSet = PatchSet.parse({ ...proposed, patchSetId, baseVersion, summary: review.summary });
  const pendingId = ctx.newId();
  return {
    state: { ...next, pending: { pendingId, patchSetId, baseVersion, summary: patchSet.summary, patches: patchSet.patches } },
    // Only one PatchSet is under review at a time: a new one supersedes the one waiting.
    close: open.map((item) => ({ id: item.id, reason: 'superseded' as const })),
    open: {
      id: pendingId,
      kind: 'patchset',
      tool: PATCHSET_TOOL,
      callId: patchSetId,
      args: { patchSetId },
      decisions: ['accept', 'reject'],
      prompt: review.summary.title ?? 'Review the proposed changes to the recipe',
      details: { patchSet, review } as unknown as JsonObject,
    },
  };
}

export function onSousDecision(state: SousState, item: PendingItem, decision: DecisionInput, ctx: KernelContext): KernelEffects<SousState> {
  const { patchSet } = detailsOf(item);
  const base = { patchSetId: patchSet.patchSetId, pendingId: item.id };
  const settled: SousState = { ...state };
  if (state.pending?.pendingId === item.id) delete settled.pending;
  let recipe = state.recipe;
  let said: string;
  if (decision.decision === 'accept') {
    // The runtime expires a PatchSet when the recipe moves on; this is the last line of that defence.
    const reasons = validatePatchSet({ recipe, defaults: state.defaults, patchSet, overrides: state.overrides });
    if (reasons.length) {
      return {
        state: settled,
        events: [event(ctx, 'patchset.rejected', { ...base, baseVersion: patchSet.baseVersion, reasons, at: 'accept' })],
        say: [`That change cannot be applied any more and nothing changed: ${reasons.join('; ')}.`],
      };
    }
    recipe = applyPatchSet(recipe, patchSet);
    said = `Accepted: ${patchSet.summary.title ?? 'the proposed changes'}. The recipe is now at version ${recipe.version}.`;
  } else {
    said = `Rejected: ${patchSet.summary.title ?? 'the proposed changes'}. The recipe is unchanged.`;
  }
  const record: PatchDecision = {
    ...base,
    decision: decision.decision === 'accept' ? 'accepted' : 'rejected',
    version: recipe.version,
    ...(patchSet.summary ? { summary: patchSet.summary } : {}),
    at: ctx.now(),
  };
  return {
    state: {
      ...settled,
      recipe,
      accepted: acceptedCount(state) + (record.decision === 'accepted' ? 1 : 0),
      decisions: [...state.decisions, record].slice(-DECISIONS_KEPT),
      lastPatchDecision: {
        patchSetId: record.patchSetId,
        decision: record.decision,
        ...(record.summary ? { summary: record.summary } : {}),
      },
    },
    events: [event(ctx, 'patchset.decided', { ...record, ...(decision.reason ? { reason: decision.reason } : {}) })],
    say: [said],
  };
}

const MarkStepDoneArgs = z.object({ stepId: z.string().trim().min(1).max(40) });
const OverrideArgs = z.object({ hardAvoid: z.string().trim().toLowerCase().min(1).max(50) });

export const sousKernel: AgentKernel<SousState> = {
  init: initialState,
  context: sousContext,
  view: sousView,
  output: { schema: SousAnswer, text: (answer: SousAnswer) => answer.assistant_message },
  onAnswer: onSousAnswer,
  onDecision: onSousDecision,
  // On another branch: the recipe and decisions as they were at its last answer; the PatchSet it waited on was
  // withdrawn with the branch it belonged to; a recipe saved meanwhile stays saved (docs/agents/sous.md).
  resume(kept, current) {
    const { pending: _pending, seen: _seen, ...rest } = kept;
    const savedRecipeId = current.savedRecipeId ?? kept.savedRecipeId;
    return { ...rest, ...(savedRecipeId ? { savedRecipeId } : {}) };
  },
  actions: {
    markStepDone: {
      args: MarkStepDoneArgs,
      apply(state, { stepId }, ctx) {
        const step = state.recipe.steps.find((s) => s.id === stepId);
        if (!step) throw new KernelRefusal('NotFound', `No step "${stepId}" in the recipe.`);
        if (step.status === 'done') return { state };
        const version = state.recipe.version + 1;
        const recipe = {
          ...state.recipe,
          version,
          steps: state.recipe.steps.map((s) => (s.id === stepId ? { ...s, status: 'done' as const } : s)),
        };
        // A PatchSet made against the old version is out of date: it expires, and a decision on it is a 409.
        const expired = openPatchSets(ctx.openItems).map((item) => item.id);
        const rest: SousState = { ...state, recipe };
        delete rest.pending;
        return {
          state: rest,
          close: expired.map((id) => ({ id, reason: 'expired' as const })),
          events: [event(ctx, 'state.changed', { change: 'step.done', stepId, version, expired })],
          ...(expired.length
            ? {
                say: [
                  `Step ${state.recipe.steps.indexOf(step) + 1} (“${step.text}”) is done, so the change waiting for review no longer fits the recipe and has expired. Ask again if you still want it.`,
                ],
              }
            : {}),
        };
      },
    },
    overrideHardAvoid: {
      args: OverrideArgs,
      apply(state, { hardAvoid }, ctx) {
        if (!state.defaults.hardAvoids.includes(hardAvoid)) {
          throw new KernelRefusal(
            'NotFound',
            `"${hardAvoid}" is not one of the hard avoids (${state.defaults.hardAvoids.join(', ') || 'none'}).`,
          );
        }
        if (state.overrides.includes(hardAvoid)) return { state };
        return {
          state: { ...state, overrides: [...state.overrides, hardAvoid] },
          events: [event(ctx, 'state.changed', { change: 'hardAvoid.overridden', hardAvoid })],
        };
      },
    },
  },
};
