// The sous agent's routes: a step marked done and a hard avoid lifted for this recipe, each an `agentAction`
// Update on the conversation's workflow; the changed recipe saved to My recipes; and where a sous
// conversation starts from (ChatSessionInput.init).
import type { Client, WorkflowHandle } from '@temporalio/client';
import { Router, type Request, type Response } from 'express';
import type { OpenApiHelpers } from '../../api/agent-server.ts';
import type pg from 'pg';
import { asUser } from '../../db/pool.ts';
import { agentActionUpdate, stateQuery } from '../../shared/definitions.ts';
import type { ConversationState, JsonObject } from '../../shared/messages.ts';
import { Recipe, type RecipeInput } from './schemas.ts';
import type { ChatSession } from '../../workflows/chat-session.ts';
import type { ConversationAccess } from '../../api/conversation-access.ts';
import { sousAgent } from './spec.ts';
import { HttpError, parseBody } from '../../api/http-error.ts';
import { OverrideBody, SaveVersionBody, SousViewFields } from './api-schemas.ts';
import { readOrigin, saveCopy, savedCopy } from './save-version.ts';
import { findSavedRecipe } from '../recipes/public.ts';

export interface SousDeps {
  client: Client;
  pool: pg.Pool;
  access: ConversationAccess;
}

/** What a conversation's view adds from its agent's state (sous: recipe, defaults, pendingPatchSet, …). */
const agentView = (state: ConversationState): JsonObject => state.agentState ?? {};

export function sousRoutes({ client, pool, access }: SousDeps): Router {
  const router = Router();

  async function ownedConversation(req: Request, res: Response) {
    const { principal, row } = await access.authorizedConversation(res, String(req.params.id));
    if (row.agent !== sousAgent.name) throw new HttpError(404, `A ${row.agent} conversation has no recipe`);
    return { row, userId: principal.user, handle: client.workflow.getHandle(row.workflowId) as WorkflowHandle<ChatSession> };
  }

  const ownedSous = async (req: Request, res: Response) => (await ownedConversation(req, res)).handle;

  async function act(handle: WorkflowHandle<ChatSession>, name: string, args: JsonObject, res: Response) {
    const state = await handle.executeUpdate(agentActionUpdate, { args: [{ name, args }] });
    res.json({ status: state.status, pending: state.pending, ...agentView(state) });
  }

  router.post('/conversations/:id/steps/:stepId/done', async (req, res) => {
    const handle = await ownedSous(req, res);
    const stepId = String(req.params.stepId);
    if (stepId.length > 40) throw new HttpError(404, `No step "${stepId.slice(0, 40)}…" in the recipe.`);
    await act(handle, 'markStepDone', { stepId }, res);
  });

  router.post('/conversations/:id/overrides', async (req, res) => {
    const handle = await ownedSous(req, res);
    const body = parseBody(OverrideBody, req.body);
    await act(handle, 'overrideHardAvoid', { hardAvoid: body.hardAvoid }, res);
  });

  // A new recipe in My recipes, "<title> (changed)", beside the one the cook started from, which stays as it
  // was. Idempotent: the same content saved again answers the same recipe (200 instead of 201).
  router.post('/conversations/:id/recipe/save', async (req, res) => {
    const { row, userId, handle } = await ownedConversation(req, res);
    const body = parseBody(SaveVersionBody, req.body ?? {});
    const state = await client.withDeadline(Date.now() + 5_000, () => handle.query(stateQuery));
    const view = SousViewFields.parse(state.agentState ?? {});
    const recipe = Recipe.safeParse(view.recipe);
    if (!recipe.success) throw new HttpError(404, `A ${row.agent} conversation has no recipe`);
    if (!view.acceptedChanges) {
      throw new HttpError(409, 'No change to the recipe has been accepted in this conversation yet, so there is nothing new to save.');
    }
    const origin = view.savedRecipeId ? await readOrigin(pool, userId, view.savedRecipeId) : undefined;
    const copy = savedCopy(recipe.data, origin, body.name);
    const saved = await saveCopy(pool, userId, row.id, copy);
    res
      .status(saved.created ? 201 : 200)
      .json({ recipeId: saved.recipeId, name: copy.name, version: recipe.data.version, created: saved.created });
  });

  return router;
}

/** ChatSessionInput.init of a new sous conversation: its recipe (given, saved, or the demo) and defaults. */
export async function sousInit(
  pool: pg.Pool,
  userId: string,
  body: { recipe?: RecipeInput; recipeId?: string; defaults?: JsonObject },
): Promise<JsonObject | undefined> {
  const recipe = body.recipeId ? await savedRecipe(pool, userId, body.recipeId) : body.recipe;
  return {
    ...(recipe ? { recipe } : {}),
    ...(body.defaults ? { defaults: body.defaults } : {}),
    ...(body.recipeId ? { savedRecipeId: body.recipeId } : {}),
  };
}

/** The caller's own saved recipe (row-level security hides everyone else's), as a recipe to cook. */
async function savedRecipe(pool: pg.Pool, userId: string, id: string): Promise<RecipeInput> {
  const saved = await asUser(pool, userId, (db) => findSavedRecipe(db, id));
  const row = saved && !saved.is_deleted ? saved : undefined;
  if (!row) throw new HttpError(404, 'Saved recipe not found');
  const ingredients = row.ingredients
    .map((i) => [[i.quantity, i.unit, i.name].filter((part) => part && String(part).trim()).join(' '), i.notes].filter(Boolean).join(', '))
    .filter((text) => text.trim())
    .map((text) => text.slice(0, 2000));
  const steps = row.instructions.filter((text) => typeof text === 'string' && text.trim()).map((text) => text.slice(0, 2000));
  if (!ingredients.length || !steps.length) throw new HttpError(422, 'That saved recipe has no ingredients or no steps to cook from');
  return {
    title: row.name.slice(0, 200),
    ...(row.servings ? { servings: row.servings } : {}),
    ingredients,
    steps,
    ...(row.notes?.trim() ? { notes: [row.notes.trim().slice(0, 2000)] } : {}),
  };
}

/** The sous routes in the OpenAPI document. */
export function sousPaths({ json, errors, idParam }: OpenApiHelpers): Record<string, unknown> {
  return {
    '/v1/conversations/{id}/steps/{stepId}/done': {
      post: {
        operationId: 'markStepDone',
        summary: 'Sous: mark a step done (idempotent); bumps the recipe version and expires a waiting PatchSet',
        parameters: [idParam, { name: 'stepId', in: 'path', required: true, schema: { type: 'string', maxLength: 40 } }],
        responses: { 200: json('The recipe and pending items after it', 'SousState'), ...errors(401, 403, 404, 503) },
      },
    },
    '/v1/conversations/{id}/overrides': {
      post: {
        operationId: 'overrideHardAvoid',
        summary: 'Sous: lift one of the hard avoids for this recipe in this conversation',
        parameters: [idParam],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/HardAvoidOverride' } } } },
        responses: { 200: json('The recipe and pending items after it', 'SousState'), ...errors(400, 401, 403, 404, 503) },
      },
    },
    '/v1/conversations/{id}/recipe/save': {
      post: {
        operationId: 'saveRecipeVersion',
        summary:
          'Sous: save the recipe as it is now (after accepted changes) to My recipes as a new recipe, "<title> (changed)" unless named; the saved recipe it started from is left as it was. Idempotent: the same content again answers the same recipe',
        parameters: [idParam],
        requestBody: { required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/SaveVersionBody' } } } },
        responses: {
          201: json('Saved: the new recipe in My recipes', 'SavedVersion'),
          200: json('This content was saved before: that recipe', 'SavedVersion'),
          ...errors(400, 401, 403, 404, 409, 503),
        },
      },
    },
  };
}
