// The JSON body layer: what a client sends is either a JSON object we can read, or a 4xx that says what
// to change. Nothing about a body (its size, type, charset or compression) can become a 500.
import express, { type NextFunction, type Request, type Response } from 'express';
import { HttpError, echo } from './http-error.ts';

export const BODY_LIMIT_BYTES = 256 * 1024;
const ENCODINGS = ['identity', 'gzip', 'deflate', 'br'];
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
const SEND_JSON = 'send the body as JSON with Content-Type: application/json';

const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * Reads a JSON body on POST, PUT and PATCH: 415 for a body that is not JSON, not UTF-8 or compressed in a
 * way we do not read; 413 for one larger than the limit (after decompression); 400 for one that does not
 * parse or decompress. A request without a body passes through (its handler reports missing fields).
 */
export function jsonBody(limitBytes = BODY_LIMIT_BYTES) {
  const parse = express.json({ limit: limitBytes, type: () => true });
  const limitText = `${Math.round(limitBytes / 1024)} KB`;
  return (req: Request, res: Response, next: NextFunction) => {
    if (!['POST', 'PUT', 'PATCH'].includes(req.method) || !hasBody(req)) return next();
    const header = req.headers['content-type'];
    if (!header) return next(new HttpError(415, `The body has no Content-Type; ${SEND_JSON}`));
    const [mediaType = '', ...parameters] = header.split(';').map((part) => part.trim());
    if (!JSON_TYPE.test(mediaType.toLowerCase())) {
      return next(new HttpError(415, `Content-Type ${echo(mediaType)} is not accepted; ${SEND_JSON}`));
    }
    const charset = parameters
      .map((parameter) => /^charset\s*=\s*"?([^"]*)"?$/i.exec(parameter)?.[1]?.trim().toLowerCase())
      .find((value) => value !== undefined);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return next(
        new HttpError(
          415,
          `charset "${echo(charset)}" is not accepted; send UTF-8 (Content-Type: application/json; charset=utf-8) or no charset`,
        ),
      );
    }
    const encoding = String(req.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (!ENCODINGS.includes(encoding)) {
      return next(
        new HttpError(415, `Content-Encoding "${echo(encoding)}" is not accepted; send the body uncompressed, or as gzip, deflate or br`),
      );
    }
    parse(req, res, (error?: unknown) => next(error ? bodyError(error, encoding, limitText) : undefined));
  };
}

/** body-parser's error types as statuses and messages that say what to change. */
function bodyError(error: unknown, encoding: string, limitText: string): unknown {
  const { type, status } = error as { type?: string; status?: number };
  const compressed = encoding !== 'identity';
  switch (type) {
    case 'entity.too.large':
      return new HttpError(413, `The body is larger than ${limitText}${compressed ? ' once decompressed' : ''}; send a smaller body`);
    case 'entity.parse.failed':
      return new HttpError(400, 'The body is not valid JSON; send a JSON object');
    case 'charset.unsupported':
      return new HttpError(415, "The body's charset is not accepted; send UTF-8");
    case 'encoding.unsupported':
      return new HttpError(415, "The body's Content-Encoding is not accepted; send it uncompressed, or as gzip, deflate or br");
    case 'request.size.invalid':
      return new HttpError(400, 'The body is not as long as its Content-Length says; send the length of the body');
    case 'request.aborted':
      return new HttpError(400, 'The request ended before its body did');
  }
  if (compressed && typeof status === 'number' && status < 500) {
    return new HttpError(400, `The body is not valid ${encoding} data; compress it as its Content-Encoding says, or send it uncompressed`);
  }
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new HttpError(400, 'The body could not be read; send a JSON object');
  return error;
}
