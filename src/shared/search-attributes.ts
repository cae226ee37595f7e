// Typed search attributes, registered on the server at start and set by the client and the workflow.
import { defineSearchAttributeKey } from '@temporalio/common';

export const AGENT_KEY = defineSearchAttributeKey('BrigadeAgent', 'KEYWORD');
export const USER_KEY = defineSearchAttributeKey('BrigadeUser', 'KEYWORD');
/** sha256 hex of BrigadeUser (src/protection/user-digest.ts): what an erasure searches by, as it needs no quoting */
export const USER_DIGEST_KEY = defineSearchAttributeKey('BrigadeUserDigest', 'KEYWORD');
export const WAITING_KEY = defineSearchAttributeKey('BrigadeWaitingForHuman', 'BOOL');
