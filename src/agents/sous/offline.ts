// The sous agent's offline model: deterministic answers in the PatchSet JSON of schemas.ts for a few documented phrasings,
// read from the last user message and the structured context (never from the system prompt). Each reply
// is marked offline by the client's badge. Phrasings (README, "The sous agent offline"):
//   "swap butter for olive oil" / "replace butter with olive oil" / "use olive oil instead of butter"
//   "add a note: rest the dough overnight"      "make it for 4"      "remove the parmesan"
//   "add a step: …" (after the last done step)  "add 1 tsp chili flakes"
//   a question ("…?", "should I…") → a clarifying reply and no PatchSet
import { introducedAvoids } from './derivatives.ts';
import { type Patch, Recipe, type SousAnswer, UserDefaults } from './schemas.ts';
import { ingredientName, mentionsTerm } from './words.ts';
import { OFFLINE_PREFIX } from '../../model/offline-types.ts';
import type { ModelRequest } from '../../model/types.ts';
import { regExpLiteral } from '../../shared/regexp-literal.ts';

interface Seen {
  recipe: Recipe;
  defaults: UserDefaults;
  overrides: string[];
  rejected?: string;
}

const QUESTION = /\?\s*$|^\s*(?:should|can|could|would|what|how|why|is|are|do|does|which|when|where)\b/i;
const NOTE = /^\s*(?:please\s+)?add (?:a )?note\s*[:,-]?\s*(.+)$/i;
const PORTIONS =
  /\b(?:make it|scale it|cook it|make this|scale this)(?: up| down)? for (\d{1,3})\b|\bfor (\d{1,3}) (?:people|persons|portions|servings)\b/i;
const SWAP = /^\s*(?:please\s+)?(?:swap|replace|switch)\s+(?:the\s+)?(.+?)\s+(?:for|with|to)\s+(?:some\s+)?(.+?)[.!]?\s*$/i;
const INSTEAD = /^\s*(?:please\s+)?use\s+(?:some\s+)?(.+?)\s+instead of\s+(?:the\s+)?(.+?)[.!]?\s*$/i;
const REMOVE = /^\s*(?:please\s+)?(?:remove|drop|leave out|skip|omit)\s+(?:the\s+)?(.+?)[.!]?\s*$/i;
const ADD_STEP = /^\s*(?:please\s+)?add (?:a )?(?:recovery )?step\s*[:,-]?\s*(.+)$/i;
const ADD = /^\s*(?:please\s+)?add\s+(.+?)[.!]?\s*$/i;

export function offlineSous(request: ModelRequest): string {
  const said = [...request.messages].reverse().find((m) => m.role === 'user' && !m.id.endsWith('.correction'))?.text ?? '';
  const seen = readContext(request.context);
  if (!seen) return answer('I cannot see the recipe, so I will not change anything.', null);
  return JSON.stringify(respond(said.trim(), seen));
}

function readContext(context: ModelRequest['context']): Seen | undefined {
  const recipe = Recipe.safeParse(context?.recipe);
  const defaults = UserDefaults.safeParse(context?.defaults);
  if (!recipe.success || !defaults.success) return undefined;
  const overrides = Array.isArray(context?.hardAvoidOverrides) ? (context.hardAvoidOverrides as string[]) : [];
  const last = (context?.llm as { lastPatchDecision?: { decision?: string; summary?: { title?: string } } } | undefined)?.lastPatchDecision;
  return {
    recipe: recipe.data,
    defaults: defaults.data,
    overrides,
    ...(last?.decision === 'rejected' ? { rejected: last.summary?.title ?? 'the last change' } : {}),
  };
}

function answer(message: string, patchSet: SousAnswer['patchSet']): string {
  return JSON.stringify({ assistant_message: `${OFFLINE_PREFIX}${message}`, patchSet });
}

function respond(said: string, seen: Seen): SousAnswer {
  const { recipe } = seen;
  const reply = (message: string, patchSet: SousAnswer['patchSet'] = null): SousAnswer => ({
    assistant_message: `${OFFLINE_PREFIX}${seen.rejected ? `Noted: you rejected "${seen.rejected}". ` : ''}${message}`,
    patchSet,
  });
  const propose = (title: string, patches: Patch[], bullets: string[], portions?: number): SousAnswer =>
    reply(`I propose: ${title}. Review it and accept or reject.`, {
      patchSetId: `ps-${recipe.version}-${hash(said)}`,
      patches,
      summary: { title, bullets },
      ...(portions ? { portions } : {}),
    });
  const conflict = (text: string) =>
    introducedAvoids(
      text,
      '',
      seen.defaults.hardAvoids.filter((a) => !seen.overrides.includes(a)),
    );
  const avoidReply = (what: string, avoids: { avoid: string }[]) =>
    reply(
      `${what} goes against your hard avoids (${avoids.map((a) => a.avoid).join(', ')}), so I changed nothing. Do you want something else instead, or to override that avoid for this recipe?`,
    );

  if (QUESTION.test(said)) {
    return reply(
      'That is a question, so I have not changed anything. Tell me what you would like, for example "swap butter for olive oil", "make it for 4" or "add a note: …", and I will propose it for review.',
    );
  }

  const note = NOTE.exec(said);
  if (note) return propose('Add a note', [{ op: 'add_note', text: clip(note[1]!) }], [`Note: ${clip(note[1]!)}`]);

  const portions = PORTIONS.exec(said);
  if (portions) {
    const target = Number(portions[1] ?? portions[2]);
    if (target <= 0) return reply('How many people are you cooking for?');
    if (target === recipe.servings) return reply(`The recipe is already for ${target}; nothing to change.`);
    const factor = target / recipe.servings;
    const patches: Patch[] = [];
    for (const ingredient of recipe.ingredients) {
      const scaled = scaleQuantity(ingredient.text, factor);
      if (scaled !== ingredient.text) patches.push({ op: 'update_ingredient', id: ingredient.id, text: scaled });
    }
    if (!patches.length) return reply('No ingredient has a quantity I can scale, so I changed nothing.');
    return propose(`Scale from ${recipe.servings} to ${target} servings`, patches, [`Quantities × ${round(factor)}`], target);
  }

  const swap = SWAP.exec(said);
  const instead = swap ? undefined : INSTEAD.exec(said);
  if (swap || instead) {
    const from = (swap ? swap[1] : instead![2])!.toLowerCase();
    const to = (swap ? swap[2] : instead![1])!.toLowerCase();
    const ingredient = recipe.ingredients.find((i) => mentionsTerm(i.text, from) || ingredientName(i.text).includes(from));
    if (!ingredient) return reply(`I cannot find "${from}" among the ingredients. Which one do you mean?`);
    const avoids = conflict(to);
    if (avoids.length) return avoidReply(`"${to}"`, avoids);
    const term = mentionsTerm(ingredient.text, from) ? from : ingredientName(ingredient.text);
    const patches: Patch[] = [{ op: 'update_ingredient', id: ingredient.id, text: replaceTerm(ingredient.text, term, to) }];
    const done: string[] = [];
    for (const step of recipe.steps) {
      if (!mentionsTerm(step.text, term)) continue;
      if (step.status === 'todo') patches.push({ op: 'update_step', step_id: step.id, text: replaceTerm(step.text, term, to) });
      else done.push(step.id);
    }
    if (done.length) {
      patches.push({
        op: 'add_note',
        text: `Step ${done.join(', ')} was already done with ${term}; from here on use ${to}.`,
      });
    }
    return propose(`Swap ${term} for ${to}`, patches, [`${ingredient.text} → ${replaceTerm(ingredient.text, term, to)}`]);
  }

  const addStep = ADD_STEP.exec(said);
  if (addStep) {
    const text = clip(addStep[1]!);
    const avoids = conflict(text);
    if (avoids.length) return avoidReply('That step', avoids);
    const anchor = recipe.steps.filter((s) => s.status === 'done').at(-1) ?? recipe.steps.at(-1);
    if (!anchor) return reply('The recipe has no steps to add after.');
    return propose('Add a step', [{ op: 'add_step', after_step_id: anchor.id, text }], [`After ${anchor.id}: ${text}`]);
  }

  const remove = REMOVE.exec(said);
  if (remove) {
    const what = remove[1]!.toLowerCase();
    const ingredient = recipe.ingredients.find((i) => mentionsTerm(i.text, what) || ingredientName(i.text).includes(what));
    if (!ingredient) return reply(`I cannot find "${what}" among the ingredients. Which one do you mean?`);
    const name = ingredientName(ingredient.text);
    return propose(
      `Leave out the ${name}`,
      [
        { op: 'remove_ingredient', id: ingredient.id },
        { op: 'add_note', text: `Leave out the ${name}: skip it wherever a step mentions it.` },
      ],
      [`Remove ${ingredient.text}`],
    );
  }

  const add = ADD.exec(said);
  if (add) {
    const text = clip(add[1]!);
    const avoids = conflict(text);
    if (avoids.length) return avoidReply(`"${text}"`, avoids);
    return propose(`Add ${ingredientName(text)}`, [{ op: 'add_ingredient', text }], [`Add ${text}`]);
  }

  return reply(
    'This is the offline model: this deployment runs without a model key. It understands "swap butter for olive oil", "add a note: …", "make it for 4", "remove the parmesan", "add a step: …", "add 1 tsp chili flakes", and answers questions with a clarifying reply.',
  );
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed;
}

function replaceTerm(text: string, term: string, by: string): string {
  return text.replace(new RegExp(`(?<![\\p{L}\\p{N}])${regExpLiteral(term)}(?![\\p{L}\\p{N}])`, 'giu'), by);
}

const UNICODE_FRACTIONS: Record<string, number> = { '½': 0.5, '⅓': 1 / 3, '⅔': 2 / 3, '¼': 0.25, '¾': 0.75, '⅛': 0.125 };

/** Scales the leading quantity of an ingredient ("1 1/2 cups", "200 g", "½ lemon"); other text stays. */
export function scaleQuantity(text: string, factor: number): string {
  const match = /^\s*(\d+\s+\d+\/\d+|\d+\/\d+|\d+(?:[.,]\d+)?|[½⅓⅔¼¾⅛])(?=\s|[a-z]|$)/i.exec(text);
  if (!match) return text;
  const value = parseQuantity(match[1]!);
  if (!Number.isFinite(value) || value <= 0) return text;
  return `${round(value * factor)}${text.slice(match[0].length)}`;
}

function parseQuantity(raw: string): number {
  if (raw in UNICODE_FRACTIONS) return UNICODE_FRACTIONS[raw]!;
  const mixed = /^(\d+)\s+(\d+)\/(\d+)$/.exec(raw);
  if (mixed) return Number(mixed[1]) + Number(mixed[2]) / Number(mixed[3]);
  const fraction = /^(\d+)\/(\d+)$/.exec(raw);
  if (fraction) return Number(fraction[1]) / Number(fraction[2]);
  return Number(raw.replace(',', '.'));
}

function round(value: number): string {
  if (value >= 10) return String(Math.round(value));
  return String(Math.round(value * 100) / 100);
}

function hash(text: string): string {
  let h = 0;
  for (const char of text) h = (Math.imul(h, 31) + char.charCodeAt(0)) | 0;
  return (h >>> 0).toString(36);
}
