// operationId for every operation of the OpenAPI document: the explicit ones stay, any operation that has
// none (a route added without one) gets one made from its method and path, so that clients generated from
// the document always have a name to call.

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Operation = { operationId?: string } & Record<string, unknown>;

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * `PATCH /v1/conversations/{id}` → `patchConversation`, `GET /v1/conversations/{id}/export` →
 * `getConversationExport`, `GET /v1/api-keys` → `getApiKeys`: the method, then the path's words without
 * the version prefix and the parameters; a word that a parameter follows (a collection) is made singular.
 */
export function derivedOperationId(method: string, path: string): string {
  const segments = path.split('/').filter(Boolean);
  const words = segments.flatMap((segment, index) => {
    if (/^\{.*\}$/.test(segment) || (index === 0 && /^v\d+$/.test(segment))) return [];
    const parts = segment.split(/[^A-Za-z0-9]+/).filter(Boolean);
    if (/^\{.*\}$/.test(segments[index + 1] ?? '') && parts.length > 0)
      parts[parts.length - 1] = parts[parts.length - 1]!.replace(/s$/, '');
    return parts;
  });
  return method.toLowerCase() + words.map(capitalized).join('');
}

/** The document with an operationId on every operation, unique across it (a made one that collides gets a number). */
export function withOperationIds<Document extends Record<string, unknown>>(document: Document): Document {
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) =>
      item[method] && typeof item[method] === 'object' ? [{ path, method, operation: item[method] as Operation }] : [],
    ),
  );
  const taken = new Set(operations.flatMap(({ operation }) => (operation.operationId ? [operation.operationId] : [])));
  const filled = { ...paths };
  for (const { path, method, operation } of operations) {
    if (operation.operationId) continue;
    const base = derivedOperationId(method, path);
    let id = base;
    for (let n = 2; taken.has(id); n += 1) id = `${base}${n}`;
    taken.add(id);
    const { operationId: _, ...rest } = operation;
    filled[path] = { ...filled[path], [method]: { operationId: id, ...rest } };
  }
  return { ...document, paths: filled };
}
