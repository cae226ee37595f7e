// A server behind OAuth that the conversation's owner has not connected (or whose connection no longer works):
// the call's result says so in words, for the model to pass on, and the server's tools stay offered.
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** signIn: a cross-app server (SEP-990), reached with the person's sign-in, which could not be used; why, in words */
export type ConnectReason = { missing: true } | { expired: true } | { scope: string } | { signIn: string };

export class ConnectFirst extends Error {
  override name = 'ConnectFirst';
  readonly server: string;
  readonly reason: ConnectReason;

  constructor(server: string, reason: ConnectReason) {
    super(connectWords(server, reason));
    this.server = server;
    this.reason = reason;
  }
}

/** What the model (and so the person) is told; it names no token, only what to do. */
export function connectWords(server: string, reason: ConnectReason): string {
  if ('signIn' in reason)
    return `Sign in to Brigade again first: ${server} is reached with the person's sign-in at their identity provider, and ${reason.signIn}; the person signs out and signs in again, then asks again.`;
  const how = `the person connects it with "Connect ${server}" at the top of the conversation (or POST /v1/mcp/servers/${server}/connect), then asks again`;
  if ('scope' in reason) return `Connect ${server} again first: it asks for more access (${reason.scope}); ${how}.`;
  if ('expired' in reason) return `Connect ${server} again first: its sign-in expired and could not be renewed; ${how}.`;
  return `Connect ${server} first: this person has not connected it yet; ${how}.`;
}

/**
 * The SDK's own refusals after an authorization (401 again after a refresh, 403 again after a step-up, an
 * authorization it could not finish) mean the same to the person: connect again.
 */
export function asConnectFirst(error: unknown, server: string): unknown {
  if (error instanceof ConnectFirst) return error;
  if (error instanceof UnauthorizedError) return new ConnectFirst(server, { expired: true });
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403))
    return new ConnectFirst(server, { expired: true });
  return error;
}
