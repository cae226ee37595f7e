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
    if (current instanceof Error && /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(current.message)) {
      return true;
    }
    if (!(current instanceof Error)) break;
  }
  return error instanceof ServiceError && /UNAVAILABLE|DEADLINE/.test(error.message);
}

/** Maps what Temporal and PostgreSQL throw onto the API's status codes. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const type = error.cause.type as FailureType | undefined;
    if (type && type in FAILURE_STATUS) return new HttpError(FAILURE_STATUS[type], error.cause.message);
  }
  if (error instanceof WorkflowNotFoundError || (isGrpcServiceError(error) && error.code === GRPC_NOT_FOUND)) {
    return new HttpError(404, 'Conversation not found (its workflow is gone)');
  }
  if (isServiceDown(error)) return new HttpError(503, 'A backing service is unavailable; try again shortly', { retryAfter: 5 });
  return new HttpError(500, 'Internal error');
}

export function errorHandler(log: (line: string, error: unknown) => void) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    // express.json() reports malformed JSON with a status of its own
    const status = (error as { status?: number; type?: string }).type === 'entity.parse.failed' ? 400 : undefined;
    const http = status ? new HttpError(400, 'The body is not valid JSON') : toHttpError(error);
    if (http.status >= 500) log(`${http.status} ${http.message}`, error);
    if (http.status === 503) res.setHeader('Retry-After', '5');
    res.status(http.status).json(http.body);
  };
}
