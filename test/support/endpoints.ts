// Every endpoint of the API, with the zod schemas of what it reads, for the fuzz test (test/api/fuzz.test.ts).
// An issue that adds an endpoint adds a row here; the fuzz test then throws hostile input at it too.
//
//   path:    `:id` is filled with one of the caller's conversations (or, sometimes, a hostile id);
//            any other `:name` is filled from `params` (a schema), or with a hostile segment
//   body:    the request body's schema (POST); bodies are generated from it, then mixed with hostile values
//   query:   a schema per query parameter
//   headers: which request headers the endpoint reads (Idempotency-Key, Last-Event-ID)
//   stream:  answers with Server-Sent Events: a 200 is checked by its headers, then the stream is closed
//   message: the field of the body whose text, when the request is accepted, must appear in the
//            conversation's transcript exactly once
import { z } from 'zod';
import { DecisionBody, MessageBody, createConversationBody } from '../../src/api/schemas.ts';
import { RecipeType } from '../../src/agents/recipes/recipe.ts';
import { OverrideBody } from '../../src/agents/sous/api-schemas.ts';

export interface EndpointRow {
  method: 'GET' | 'POST';
  path: string;
  body?: z.ZodType;
  params?: Record<string, z.ZodType>;
  query?: Record<string, z.ZodType>;
  headers?: Array<'Idempotency-Key' | 'Last-Event-ID'>;
  stream?: boolean;
  message?: string;
}

export const ENDPOINTS: EndpointRow[] = [
  { method: 'POST', path: '/v1/conversations', body: createConversationBody(), headers: ['Idempotency-Key'] },
  { method: 'GET', path: '/v1/conversations' },
  { method: 'GET', path: '/v1/conversations/:id' },
  { method: 'POST', path: '/v1/conversations/:id/messages', body: MessageBody, headers: ['Idempotency-Key'], message: 'text' },
  { method: 'POST', path: '/v1/conversations/:id/decisions', body: DecisionBody, headers: ['Idempotency-Key'] },
  {
    method: 'GET',
    path: '/v1/conversations/:id/events',
    query: { lastEventId: z.string().regex(/^\d{1,25}$/) },
    headers: ['Last-Event-ID'],
    stream: true,
  },
  {
    method: 'GET',
    path: '/v1/recipes',
    query: {
      type: RecipeType,
      q: z.string().max(200),
      deleted: z.enum(['true', 'false']),
      limit: z.number().int().min(1).max(100),
      cursor: z.string().max(200),
    },
  },
  { method: 'GET', path: '/v1/recipes/:id' },
  // a saved recipe's image on the local object store: no bearer token, the name is the recipe's uuid
  { method: 'GET', path: '/files/recipes/:name' },
  { method: 'GET', path: '/v1/conversations/:id/metrics' },
  // stepId: a uuid or a hostile segment (a params schema would meet the fuzz test's encodeURIComponent of lone surrogates)
  { method: 'POST', path: '/v1/conversations/:id/steps/:stepId/done' },
  { method: 'POST', path: '/v1/conversations/:id/overrides', body: OverrideBody },
  // Stop and export (issue 22). DELETE /v1/conversations/:id is left out: it would take the fuzz test's own
  // conversations away mid-run; test/workflows/turn-control.test.ts covers it.
  { method: 'POST', path: '/v1/conversations/:id/stop' },
  { method: 'GET', path: '/v1/conversations/:id/export', query: { format: z.enum(['json', 'markdown']) } },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/openapi.json' },
];
