// OpenID Connect access tokens for the API (issue 34): the provider's discovery document and signing keys,
// cached, and the checks a JWT access token must pass. Identity comes from (iss, sub) only.
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { normalizeClientId } from '../shared/client-id.ts';
import { plainText } from '../shared/safe-text.ts';

/** Algorithms with a public key: an HMAC is keyed by a secret we would have to share, and `none` by nothing. */
const ASYMMETRIC = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);
/** Signing keys are fetched again after this long, in the background; a failed fetch keeps the keys we have. */
const KEYS_REFRESH_MS = 10 * 60_000;
const DISCOVERY_RETRY_MS = 10_000;

const Discovery = z.object({
  issuer: z.string(),
  jwks_uri: z.url(),
  authorization_endpoint: z.url().optional(),
  token_endpoint: z.url().optional(),
  end_session_endpoint: z.url().optional(),
  id_token_signing_alg_values_supported: z.array(z.string()).optional(),
  code_challenge_methods_supported: z.array(z.string()).optional(),
});
export type Discovery = z.infer<typeof Discovery>;

/** Why a token is refused, in words fit for `error_description` (never the token). */
export class InvalidToken extends Error {
  override name = 'InvalidToken';
}
/** The provider cannot be reached and we hold no keys (or no discovery) to check the token with. */
export class ProviderUnavailable extends Error {
  override name = 'ProviderUnavailable';
}

export interface OidcIdentity {
  iss: string;
  sub: string;
  /** the user_id rows carry: a digest of (iss, sub), in a namespace no API_TOKENS user may take */
  user: string;
  roles: string[];
  client?: string;
  name?: string;
}

export const oidcUserId = (iss: string, sub: string) => `oidc:${createHash('sha256').update(`${iss}\n${sub}`).digest('base64url')}`;

type OidcConfig = Pick<
  Config,
  | 'AUTH_OIDC_ISSUER'
  | 'AUTH_OIDC_AUDIENCE'
  | 'AUTH_OIDC_ROLES_CLAIM'
  | 'AUTH_OIDC_CLIENT_CLAIM'
  | 'AUTH_OIDC_CLOCK_SKEW'
  | 'AUTH_OIDC_CLIENT_ID'
  | 'AUTH_OIDC_MAX_TOKEN_AGE'
  | 'AUTH_OIDC_UNKNOWN_KID_REFETCH'
>;

/** A claim by name, or by a dotted path into objects when no claim has the whole name (Keycloak's realm_access.roles). */
function claimAt(payload: JWTPayload, name: string): unknown {
  if (name in payload) return payload[name];
  return name
    .split('.')
    .reduce<unknown>((value, part) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined), payload);
}

export function rolesFrom(payload: JWTPayload, claim: string): string[] {
  const value = claimAt(payload, claim);
  if (Array.isArray(value)) return value.filter((role): role is string => typeof role === 'string' && role.length > 0);
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  return [];
}

/** An ID token has markers an access token does not: a nonce or hashes of the code and token, or Keycloak's typ "ID". */
function looksLikeIdToken(payload: JWTPayload, header: { typ?: string }): boolean {
  if (header.typ && !/^(JWT|at\+jwt|application\/at\+jwt)$/i.test(header.typ)) return true;
  return 'nonce' in payload || 'at_hash' in payload || 'c_hash' in payload || payload.typ === 'ID';
}

export class OidcVerifier {
  readonly issuer: string;
  private discovery?: Discovery;
  private discovering?: Promise<Discovery>;
  private discoveryFailedAt = 0;
  private jwks?: JSONWebKeySet;
  private local?: ReturnType<typeof createLocalJWKSet>;
  private keysFetchedAt = 0;
  private keysFetching?: Promise<void>;
  private lastUnknownKidFetch = 0;
  /** keys fetches so far (tests and metrics read it) */
  keyFetches = 0;

  private readonly config: OidcConfig & { AUTH_OIDC_ISSUER: string; AUTH_OIDC_AUDIENCE: string };
  private readonly log: (line: string) => void;
  private readonly now: () => number;

  constructor(
    config: OidcConfig & { AUTH_OIDC_ISSUER: string; AUTH_OIDC_AUDIENCE: string },
    log: (line: string) => void = () => undefined,
    now: () => number = Date.now,
  ) {
    this.config = config;
    this.log = log;
    this.now = now;
    this.issuer = config.AUTH_OIDC_ISSUER;
  }

  /** The discovery document, fetched once; a failure is retried after a pause rather than on every request. */
  async metadata(): Promise<Discovery> {
    if (this.discovery) return this.discovery;
    if (this.now() - this.discoveryFailedAt < DISCOVERY_RETRY_MS && !this.discovering)
      throw new ProviderUnavailable('the sign-in provider could not be reached');
    this.discovering ??= (async () => {
      const url = `${this.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(5_000), redirect: 'error' });
        if (!response.ok) throw new Error(`answered ${response.status}`);
        const document = Discovery.parse(await response.json());
        // The document must be the issuer's own (OpenID Connect Discovery 1.0, section 4.3).
        if (document.issuer !== this.issuer) throw new Error(`names issuer ${JSON.stringify(document.issuer)}`);
        this.discovery = document;
        return document;
      } catch (error) {
        this.discoveryFailedAt = this.now();
        this.log(`OIDC discovery at ${url} failed: ${(error as Error).message}`);
        throw new ProviderUnavailable('the sign-in provider could not be reached');
      } finally {
        this.discovering = undefined;
      }
    })();
    return this.discovering;
  }

  /** One fetch of the key set at a time; the keys we hold stay in use when a fetch fails. */
  private refreshKeys(): Promise<void> {
    this.keysFetching ??= (async () => {
      try {
        const { jwks_uri } = await this.metadata();
        this.keyFetches++;
        const response = await fetch(jwks_uri, { signal: AbortSignal.timeout(5_000), redirect: 'error' });
        if (!response.ok) throw new Error(`answered ${response.status}`);
        const jwks = (await response.json()) as JSONWebKeySet;
        if (!Array.isArray(jwks?.keys)) throw new Error('is not a key set');
        this.jwks = jwks;
        this.local = createLocalJWKSet(jwks);
        this.keysFetchedAt = this.now();
      } catch (error) {
        this.log(`OIDC signing keys could not be fetched: ${(error as Error).message}${this.local ? '; the cached keys stay in use' : ''}`);
        if (!this.local) throw new ProviderUnavailable('the sign-in provider could not be reached for its signing keys');
      } finally {
        this.keysFetching = undefined;
      }
    })();
    return this.keysFetching;
  }

  /** The asymmetric algorithms the issuer publishes, in its discovery document or on its keys. */
  private algorithms(): string[] {
    const published = new Set([
      ...(this.discovery?.id_token_signing_alg_values_supported ?? []),
      ...(this.jwks?.keys ?? []).map((key) => key.alg).filter((alg): alg is string => !!alg),
    ]);
    return [...published].filter((alg) => ASYMMETRIC.has(alg));
  }

  async verify(token: string): Promise<OidcIdentity> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
      decodeJwt(token);
    } catch {
      throw new InvalidToken('the token is not a JWT');
    }
    if (!header.alg || !ASYMMETRIC.has(header.alg))
      throw new InvalidToken(`the token's algorithm ${JSON.stringify(header.alg ?? 'none').slice(0, 20)} is not accepted`);
    if (!this.local) await this.refreshKeys();
    else if (this.now() - this.keysFetchedAt > KEYS_REFRESH_MS) void this.refreshKeys().catch(() => undefined);
    const algorithms = this.algorithms();
    if (!algorithms.includes(header.alg)) throw new InvalidToken(`the issuer does not publish the algorithm ${header.alg}`);

    const verifyOnce = () =>
      jwtVerify(token, this.local!, {
        issuer: this.issuer,
        audience: this.config.AUTH_OIDC_AUDIENCE,
        algorithms,
        ...this.timeChecks(),
        requiredClaims: ['exp', 'sub'],
      });
    let payload: JWTPayload;
    try {
      try {
        ({ payload } = await verifyOnce());
      } catch (error) {
        // A key we do not hold: the provider may have rotated. Fetch again, at most once per
        // AUTH_OIDC_UNKNOWN_KID_REFETCH (5 s): forged kids cannot make us hammer the provider, and since the
        // limit is a few seconds, not a minute, a flood of them delays a real rotation by that much at most.
        if (
          !(error instanceof errors.JWKSNoMatchingKey) ||
          this.now() - this.lastUnknownKidFetch < this.config.AUTH_OIDC_UNKNOWN_KID_REFETCH
        )
          throw error;
        this.lastUnknownKidFetch = this.now();
        await this.refreshKeys();
        ({ payload } = await verifyOnce());
      }
      this.checkIssuedAt(payload);
    } catch (error) {
      throw this.explain(error, token);
    }
    if (looksLikeIdToken(payload, header)) throw new InvalidToken('an ID token is not an access token');
    const client = this.config.AUTH_OIDC_CLIENT_CLAIM ? claimAt(payload, this.config.AUTH_OIDC_CLIENT_CLAIM) : undefined;
    // a display name is stored and shown: the same plain text as a title (src/shared/safe-text.ts)
    const name = [payload.preferred_username, payload.name, payload.email]
      .map((value) => (typeof value === 'string' ? plainText(value) : ''))
      .find((value) => value.length > 0);
    return {
      iss: payload.iss!,
      sub: payload.sub!,
      user: oidcUserId(payload.iss!, payload.sub!),
      roles: rolesFrom(payload, this.config.AUTH_OIDC_ROLES_CLAIM),
      client: typeof client === 'string' && client.trim() ? normalizeClientId(client) : undefined,
      name: name?.slice(0, 200),
    };
  }

  /** The sign-in's ID token: for this client, from this issuer, with the nonce this sign-in sent; answers its subject. */
  async verifyIdToken(idToken: string, clientId: string, nonce: string): Promise<string> {
    if (!this.local) await this.refreshKeys();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.local!, {
        issuer: this.issuer,
        audience: clientId,
        algorithms: this.algorithms(),
        ...this.timeChecks(),
        requiredClaims: ['exp', 'sub', 'nonce'],
      }));
      this.checkIssuedAt(payload);
    } catch (error) {
      throw this.explain(error, idToken);
    }
    if (payload.nonce !== nonce) throw new InvalidToken('the ID token is not from this sign-in (nonce)');
    return payload.sub!;
  }

  /** jose's checks of exp, nbf and, with AUTH_OIDC_MAX_TOKEN_AGE, of iat's age; our clock is `now` */
  private timeChecks() {
    const maxAge = this.config.AUTH_OIDC_MAX_TOKEN_AGE;
    return {
      clockTolerance: Math.round(this.config.AUTH_OIDC_CLOCK_SKEW / 1000),
      currentDate: new Date(this.now()),
      ...(maxAge === undefined ? {} : { maxTokenAge: Math.round(maxAge / 1000) }),
    };
  }

  /**
   * A token issued in the future beyond the clock skew is refused, whatever its exp: jose checks iat only with
   * a maximum age, and a signer whose clock runs ahead (or a token minted to outlive a revocation) is no
   * token to trust now.
   */
  private checkIssuedAt(payload: JWTPayload): void {
    if (payload.iat === undefined) return;
    if (typeof payload.iat !== 'number' || !Number.isFinite(payload.iat)) throw new InvalidToken("the token's iat claim is not valid");
    if (payload.iat * 1000 > this.now() + this.config.AUTH_OIDC_CLOCK_SKEW) throw new InvalidToken('the token is issued in the future');
  }

  /** jose's errors in RFC 6750 words; jose's own messages can quote claim values, so none is passed on. */
  private explain(error: unknown, token: string): Error {
    if (error instanceof ProviderUnavailable || error instanceof InvalidToken) return error;
    if (error instanceof errors.JWTExpired && error.claim === 'iat')
      return new InvalidToken('the token is older than the maximum token age');
    if (error instanceof errors.JWTExpired) return new InvalidToken('the token has expired');
    if (error instanceof errors.JWTClaimValidationFailed) {
      if (error.claim === 'nbf') return new InvalidToken('the token is not valid yet');
      if (error.claim === 'iat') return new InvalidToken('the token is issued in the future');
      if (error.claim === 'iss') return new InvalidToken('the token is from another issuer');
      if (error.claim === 'aud') {
        let payload: JWTPayload = {};
        try {
          payload = decodeJwt(token);
        } catch {
          // verified already; cannot fail
        }
        const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
        const clientId = this.config.AUTH_OIDC_CLIENT_ID;
        if (looksLikeIdToken(payload, {}) || (clientId && aud.includes(clientId)))
          return new InvalidToken('an ID token is not an access token');
        return new InvalidToken('the token is for another audience');
      }
      return new InvalidToken(`the token's ${error.claim} claim is missing or not valid`);
    }
    if (error instanceof errors.JWKSNoMatchingKey) return new InvalidToken('the token is signed with an unknown key');
    if (error instanceof errors.JOSEAlgNotAllowed) return new InvalidToken("the token's algorithm is not accepted");
    if (error instanceof errors.JWSSignatureVerificationFailed) return new InvalidToken("the token's signature is not valid");
    if (error instanceof errors.JOSEError) return new InvalidToken('the token is not valid');
    return error instanceof Error ? error : new Error(String(error));
  }
}
