import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/common';
import { ServiceError, WorkflowUpdateFailedError, isGrpcServiceError } from '@temporalio/client';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { FAILURE_STATUS, type FailureType } from '../shared/failures.ts';

export class HttpError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  constructor(status: number, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.body = { error: message, ...extra };
  }
}

export const notFound = () => new HttpError(404, 'Conversation not found');

const ECHO_LIMIT = 60;
const MESSAGE_LIMIT = 1_000;

/** A client-given value as an error may repeat it: at most ECHO_LIMIT characters, so 100 KB in is not 100 KB out. */
export const echo = (value: string): string =>
  value.length <= ECHO_LIMIT ? value : `${value.slice(0, ECHO_LIMIT)}… (${value.length} characters)`;

/**
 * Caps what a message from elsewhere (a workflow's failure, which may quote a pending id or arguments)
 * repeats: each long unbroken run of characters is shortened, then the whole message.
 */
export const capMessage = (message: string): string => {
  const runs = message.replace(/\S{121,}/g, (run) => echo(run));
  return runs.length <= MESSAGE_LIMIT ? runs : `${runs.slice(0, MESSAGE_LIMIT)}…`;
};

/** Parses a request part with zod; a failure names each field and what is wrong with it. */
export function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => ({ field: issue.path.join('.') || '(body)', message: issue.message }));
  throw new HttpError(400, fields.map((f) => `${f.field}: ${f.message}`).join('; '), { fields });
}

const GRPC_NOT_FOUND = 5;
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

function isServiceDown(error: unknown): boolean {
  for (let current: unknown = error; current; current = (current as { cause?: unknown }).cause) {
    if (isGrpcServiceError(current) && [GRPC_UNAVAILABLE, GRPC_DEADLINE_EXCEEDED].includes(current.code)) return true;
    const code = (current as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === '57P01' || code === '57P03') return true;
    if (
      current instanceof Error &&
      /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(current.message)
    ) {
      return true;
    }
    if (!(current instanceof Error)) break;
  }
  return error instanceof ServiceError && /UNAVAILABLE|DEADLINE/.test(error.message);
}

const RefusedFields = z.object({ fields: z.array(z.object({ field: z.string(), message: z.string() })).max(100) });

/** The fields a workflow's refusal names (src/workflows/failure-text.ts), each capped like the message. */
function refusedFields(details: unknown): { field: string; message: string }[] | undefined {
  const parsed = RefusedFields.safeParse(details);
  return parsed.success ? parsed.data.fields.map((f) => ({ field: echo(f.field), message: capMessage(f.message) })) : undefined;
}

/** Maps what Temporal and PostgreSQL throw onto the API's status codes. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const type = error.cause.type as FailureType | undefined;
    if (type && type in FAILURE_STATUS) {
      const fields = refusedFields(error.cause.details?.[0]);
      return new HttpError(FAILURE_STATUS[type], capMessage(error.cause.message), fields ? { fields } : {});
    }
  }
  if (error instanceof WorkflowUpdateFailedError) {
    // Not a refusal of ours: the turn was cut off (a worker or the server went away mid-update). Retrying
    // with the same Idempotency-Key returns the turn's single outcome once it has one.
    return new HttpError(503, 'The turn was interrupted before it answered; retry with the same Idempotency-Key to get its outcome', {
      retryAfter: 5,
    });
  }
  const request = requestError(error);
  if (request) return request;
  if (error instanceof WorkflowNotFoundError || (isGrpcServiceError(error) && error.code === GRPC_NOT_FOUND)) {
    return new HttpError(404, 'Conversation not found (its workflow is gone)');
  }
  if (isServiceDown(error)) return new HttpError(503, 'A backing service is unavailable; try again shortly', { retryAfter: 5 });
  return new HttpError(500, 'Internal error');
}

/**
 * Errors that Express and body-parser raise about the request itself (http-errors with a 4xx status):
 * a path that does not percent-decode, a body that does not arrive whole. Never their own message,
 * which can repeat the client's input at any length.
 */
function requestError(error: unknown): HttpError | undefined {
  if (error instanceof URIError || (error instanceof Error && /^Failed to decode param/.test(error.message))) {
    return new HttpError(400, 'The path has a malformed percent-encoding (a % not followed by two hex digits); encode a literal % as %25');
  }
  const { status, expose } = error as { status?: unknown; expose?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500 && expose === true) {
    return new HttpError(status === 413 || status === 415 ? status : 400, 'The request could not be read; check its headers and body');
  }
  return undefined;
}

export function errorHandler(log: (line: string, error: unknown) => void) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const requestId = String(res.locals.requestId ?? '-');
    if (res.headersSent) {
      // A stream (SSE) that failed after its first byte: all that is left is to log it and end it.
      log(`Stream failed after the response began (request ${requestId}, ${req.method} ${req.path.slice(0, 200)})`, error);
      res.end();
      return;
    }
    const http = toHttpError(error);
    if (http.status >= 500) log(`${http.status} ${http.message} (request ${requestId}, ${req.method} ${req.path.slice(0, 200)})`, error);
    if (http.status === 503) res.setHeader('Retry-After', '5');
    if (http.status === 429) res.setHeader('Retry-After', String(http.body.retryAfter ?? 60));
    // A 5xx carries the request id, so a report can be matched to the log line; never the cause.
    res.status(http.status).json(http.status >= 500 ? { ...http.body, requestId } : http.body);
  };
}
