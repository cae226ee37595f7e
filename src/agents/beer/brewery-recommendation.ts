// The beer agent's five steps as a child workflow of the conversation (tool recommend_breweries):
// profile, search (broadening until 3-5 new breweries), presentation, "would you like details?" (a
// confirmation the conversation shows and times out), and a website summary only when the user picks one.
// Each step is a progress event; the execution log and metrics are a Query (beerMetricsQuery).
import { patched, proxyActivities, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  type BeerActivities,
  type BreweryResult,
  CONFIRMATION_PROMPT,
  type ClientProfile,
  DEFAULT_CONFIRMATION_TIMEOUT_MS,
  type LogEntry,
  MAX_RECOMMENDATIONS,
  MIN_RECOMMENDATIONS,
  type RecommendationMetrics,
  STEPS,
  type SearchResult,
  type StepName,
  type SummaryResult,
  addNewBreweries,
  beerMetricsQuery,
  metricsOf,
  searchPlan,
} from './definitions.ts';
import type { ChildToolInput, ChildToolOutput } from '../../shared/child-tool.ts';
import type { JsonObject } from '../../shared/messages.ts';
import { findOption } from '../../shared/pending-kinds.ts';
import type { ProgressState } from '../../shared/progress.ts';
import { parentAsker } from '../../workflows/ask-parent.ts';
import { progressReporter } from '../../workflows/progress.ts';

// Timeout profiles per step: a profile is one indexed query; a search may spend the client's own attempts
// (timeout x attempts plus backoff) before answering API_ERROR; a summary may wait on another
// conversation's grounding call for the same brewery, then make its own.
const profileActivities = proxyActivities<BeerActivities>({
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 3, initialInterval: '500ms', backoffCoefficient: 2 },
});
const searchActivities = proxyActivities<BeerActivities>({
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 2, initialInterval: '1s' },
});
const summaryActivities = proxyActivities<BeerActivities>({
  startToCloseTimeout: '3m',
  retry: { maximumAttempts: 3, initialInterval: '1s', backoffCoefficient: 2 },
});
export async function breweryRecommendation(input: ChildToolInput): Promise<ChildToolOutput> {
  const ask = parentAsker(input);
  const { workflowId } = workflowInfo();
  const startedAt = Date.now();
  const log: LogEntry[] = [];
  let endedAt: number | null = null;
  let answer: RecommendationMetrics['answer'] = null;
  let presented = 0;
  let grounded = 0;
  setHandler(beerMetricsQuery, () => metricsOf({ workflowId, startedAt, endedAt, now: Date.now(), answer, presented, log, grounded }), {
    description: 'The execution log (per tool call: step, time, status, cache state) and metrics of this recommendation.',
  });

  const reporter = progressReporter(input, STEPS);
  const progress = async (step: StepName, state: ProgressState, message?: string) => {
    setCurrentDetails(`Step ${STEPS.indexOf(step) + 1}/5 ${step}: ${state}${message ? ` (${message})` : ''}`);
    await reporter.report(step, state, message);
  };
  const done = (result: JsonObject, cards?: JsonObject[]): ChildToolOutput => {
    endedAt = Date.now();
    return { result: { workflow_id: workflowId, ...result }, ...(cards?.length ? { cards } : {}) };
  };

  // 1. profile
  await progress('profile', 'started');
  if (!input.client) {
    await progress('profile', 'failed', 'no client');
    return done({
      status: 'CLIENT_NOT_FOUND',
      message: 'This conversation acts for no client (bar), so there is no profile to recommend from.',
    });
  }
  const looked = await profileActivities.beerProfile.executeWithOptions({ summary: `profile of client ${input.client}` }, [
    { userId: input.userId, client: input.client, conversationId: input.conversationId },
  ]);
  log.push({
    step: 'profile',
    tool: 'get_client_profile',
    at: new Date().toISOString(),
    ms: looked.ms,
    status: looked.profile ? 'success' : 'not_found',
  });
  const profile = looked.profile;
  if (!profile) {
    await progress('profile', 'failed', 'client not found');
    return done({ status: 'CLIENT_NOT_FOUND', message: `No profile for client ${input.client}.` });
  }
  await progress('profile', 'done');

  // 2. search, broadening until enough new breweries
  await progress('search', 'started');
  const found: BreweryResult[] = [];
  // what this conversation was offered before counts as seen: no repeats unless the person asks for them
  const earlier = input.args.include_earlier === true ? [] : (looked.recommendedBefore ?? []);
  const seen = new Set<string>(earlier);
  const searches: JsonObject[] = [];
  let apiError: SearchResult | undefined;
  for (const query of searchPlan(profile)) {
    if (found.length >= MIN_RECOMMENDATIONS) break;
    const args = { ...query, brewery_history: profile.brewery_history, per_page: 50 };
    const { result, ms } = await searchActivities.beerSearch.executeWithOptions(
      { summary: `search ${[query.city, query.state, query.brewery_type].filter(Boolean).join(', ')}` },
      [args],
    );
    log.push({
      step: 'search',
      tool: 'search_breweries',
      at: new Date().toISOString(),
      ms,
      status: result.status,
      detail: JSON.stringify(query),
    });
    searches.push({ ...query, status: result.status, found: result.metadata.total_found, new: result.breweries.length });
    if (result.status === 'API_ERROR') {
      apiError = result;
      break;
    }
    addNewBreweries(found, seen, result.breweries);
  }
  const picks = found.slice(0, MAX_RECOMMENDATIONS);
  presented = picks.length;
  const clientView = { client_id: profile.client_id, client_name: profile.client_name, city: profile.city, state: profile.state };
  if (picks.length === 0) {
    // the step's message is read by people (the progress card) and operators (the Web UI's details)
    await progress('search', 'failed', apiError ? (apiError.error ?? 'OpenBreweryDB is unavailable') : 'no new breweries');
    if (apiError)
      return done({ status: 'API_ERROR', client: clientView, error: apiError.error ?? 'OpenBreweryDB is unavailable', searches });
    return done({
      status: 'NO_NEW_BREWERIES',
      client: clientView,
      message: `No new breweries found in ${profile.city}, ${profile.state} or elsewhere in the state${
        earlier.length
          ? ` beyond the ${earlier.length} already recommended in this conversation (include_earlier: true offers those again)`
          : ''
      }.`,
      searches,
    });
  }
  await progress('search', 'done', `${picks.length} new breweries`);

  // 3. presentation
  await progress('presentation', 'started');
  const breweriesCard: JsonObject = { type: 'breweries', breweries: picks.map(cardOf) };
  const presentation = `I found ${picks.length} new breweries for ${profile.client_name}:\n${picks
    .map((b, i) => `${i + 1}. ${b.brewery_name} - ${b.brewery_type} - ${b.city}, ${b.state}`)
    .join('\n')}`;
  await progress('presentation', 'done');

  // 4. "would you like details?"
  await progress('confirmation', 'started');
  const options = picks.map((b) => ({ id: b.brewery_id, name: b.brewery_name, city: b.city, state: b.state }));
  const outcome = await ask({
    kind: 'confirmation',
    tool: input.tool,
    args: {},
    decisions: ['yes', 'no'],
    deadlineMs: input.settings.agent?.beerConfirmationTimeoutMs ?? DEFAULT_CONFIRMATION_TIMEOUT_MS,
    onTimeout: 'no',
    prompt: CONFIRMATION_PROMPT,
    options,
    details: { presentation, breweries: breweriesCard.breweries as JsonObject[] },
  });
  // Stop ended the turn: the question was withdrawn (or never shown), the run ends here and says so
  if (outcome.withdrawn && patched('beer-stopped-run-says-so')) {
    answer = 'no';
    await progress('confirmation', 'stopped', 'you pressed Stop');
    return done({ status: 'stopped', client: clientView, breweries: picks, message: 'The user pressed Stop; nothing was asked.' });
  }
  const choice = outcome.decision.decision === 'yes' ? findOption(options, outcome.decision.choice ?? options[0]!.id) : undefined;
  answer = outcome.timedOut ? 'timeout' : choice ? 'yes' : 'no';
  await progress('confirmation', 'done', answer);
  const base = { status: 'success', client: clientView, breweries: picks, presentation, question: CONFIRMATION_PROMPT, answer, searches };

  // 5. the summary, only for a brewery the user chose
  if (!choice) {
    await progress('summary', 'skipped', answer === 'timeout' ? 'no answer in time' : 'the user said no');
    return done(base, [breweriesCard]);
  }
  await progress('summary', 'started', choice.name);
  const chosen = picks.find((b) => b.brewery_id === choice.id)!;
  const address = [chosen.street, chosen.city, chosen.state, chosen.postal_code].filter((part) => part !== 'Unavailable').join(', ');
  const { result: summary, ms } = await summaryActivities.beerSummary.executeWithOptions({ summary: `summary of ${chosen.brewery_name}` }, [
    {
      brewery_name: chosen.brewery_name,
      url: chosen.website_url,
      brewery_type: chosen.brewery_type,
      ...(address ? { address } : {}),
      userId: input.userId,
      conversationId: input.conversationId,
    },
  ]);
  if (summary.metadata.grounded) grounded += 1;
  log.push({
    step: 'summary',
    tool: 'get_website_summary',
    at: new Date().toISOString(),
    ms,
    status: summary.status,
    cacheStatus: summary.cache_status,
  });
  await progress(
    'summary',
    summary.status === 'success' ? 'done' : 'failed',
    summary.status === 'success' ? (summary.cache_status ?? undefined) : summary.status,
  );
  return done(
    { ...base, chosen: { brewery_id: chosen.brewery_id, brewery_name: chosen.brewery_name }, summary: summaryForModel(summary) },
    [breweriesCard, summaryCard(chosen, summary)],
  );
}

function cardOf(b: BreweryResult): JsonObject {
  return {
    id: b.brewery_id,
    name: b.brewery_name,
    type: b.brewery_type,
    city: b.city,
    state: b.state,
    street: b.street,
    postal_code: b.postal_code,
    phone: b.phone,
    website_url: b.website_url,
  };
}

function summaryForModel(summary: SummaryResult): JsonObject {
  const { metadata: _, ...rest } = summary;
  return rest;
}

function summaryCard(chosen: BreweryResult, summary: SummaryResult): JsonObject {
  return {
    type: 'brewery_summary',
    id: chosen.brewery_id,
    name: chosen.brewery_name,
    url: chosen.website_url,
    status: summary.status,
    summary: summary.summary,
    cache_status: summary.cache_status,
    cached_at: summary.cached_at,
    sources: summary.grounding?.source_count ?? 0,
  };
}
