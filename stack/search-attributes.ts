import type { Connection } from '@temporalio/client';
import { AGENT_KEY, USER_DIGEST_KEY, USER_KEY, WAITING_KEY } from '../src/shared/search-attributes.ts';
import type { SearchAttributeType } from './temporal-dev-server.ts';

const CLI_TYPE = { KEYWORD: 'Keyword', BOOL: 'Bool' } as const satisfies Record<string, SearchAttributeType>;

/** The typed search attributes operators filter on in the Web UI, named once in src/shared, as the CLI spells their types. */
export const SEARCH_ATTRIBUTES: Record<string, SearchAttributeType> = Object.fromEntries(
  [AGENT_KEY, USER_KEY, USER_DIGEST_KEY, WAITING_KEY].map((key) => [key.name, CLI_TYPE[key.type as keyof typeof CLI_TYPE]]),
);

// temporal.api.enums.v1.IndexedValueType, by number so we need not depend on @temporalio/proto.
const INDEXED_VALUE_TYPE: Record<SearchAttributeType, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

const GRPC_ALREADY_EXISTS = 6;

/**
 * Registers our search attributes on a Temporal that we did not start (TEMPORAL_ADDRESS); the dev
 * server gets them as flags. Idempotent: present ones are left alone, a clash of types is an error.
 */
export async function ensureSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
  attributes: Record<string, SearchAttributeType> = SEARCH_ATTRIBUTES,
): Promise<{ added: string[] }> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const custom = (existing.customAttributes ?? {}) as Record<string, number>;
  const missing: Record<string, number> = {};
  for (const [name, type] of Object.entries(attributes)) {
    const want = INDEXED_VALUE_TYPE[type];
    const have = custom[name];
    if (have === undefined) missing[name] = want;
    else if (have !== want) {
      throw new Error(`Temporal search attribute ${name} exists in namespace "${namespace}" with another type; Brigade needs ${type}`);
    }
  }
  const added = Object.keys(missing);
  if (added.length === 0) return { added };
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (error) {
    if ((error as { code?: number }).code === GRPC_ALREADY_EXISTS) return { added: [] };
    const commands = added.map(
      (name) => `temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${attributes[name]}`,
    );
    throw new Error(
      `Could not register Temporal search attributes ${added.join(', ')}: ${(error as Error).message}\nRegister them yourself, e.g.:\n  ${commands.join('\n  ')}`,
      { cause: error },
    );
  }
  return { added };
}
