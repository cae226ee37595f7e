// Requests exactly as a hostile client would send them: any path bytes, any headers, any body bytes.
// (fetch normalises or refuses some of these; node:http sends them as given.)
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** the parsed JSON body, or undefined when the body is not JSON */
  json: any;
}

export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: {
    headers?: Record<string, string>;
    body?: string | Buffer;
    timeoutMs?: number;
    /** an event stream that opens (200, text/event-stream) resolves with its headers and is closed */
    stream?: boolean;
  } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  // Framed by Content-Length on every method (Node would send a GET's body unframed).
  const headers = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, method, path, headers, timeout: options.timeoutMs ?? 15_000 },
      (response) => {
        if (options.stream && response.statusCode === 200 && String(response.headers['content-type']).startsWith('text/event-stream')) {
          resolve({ status: 200, headers: response.headers, text: '', json: undefined });
          request.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${method} ${path.slice(0, 80)} timed out`)));
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}
