import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ADMIN_TOKEN_MAX_LENGTH, type AdminToken } from '../admin-tokens.ts';
import { soleAuthorization } from '../http/auth.ts';
import { adminUnauthenticated, tooManyFailedLogins } from './errors.ts';
import { LoginFailures } from './login-failures.ts';

// The scheme's name is case-insensitive (RFC 9110 §11.1); the token is not.
const BEARER = new RegExp(`^Bearer ([\\x21-\\x7e]{1,${ADMIN_TOKEN_MAX_LENGTH}})$`, 'i');

/**
 * Checks `Authorization: Bearer <ADMIN_TOKEN>` and answers the token's label, which the audit
 * log names. The presented token is hashed and its digest compared with every accepted
 * digest in constant time (a wrong token takes as long as a right one, whichever it nearly
 * matches); only the digests were kept from the configuration.
 */
export class AdminAuth {
  private readonly tokens: readonly AdminToken[];
  private readonly failures: LoginFailures;

  constructor(tokens: readonly AdminToken[], failures: LoginFailures = new LoginFailures()) {
    this.tokens = tokens;
    this.failures = failures;
  }

  /** The label of the token the request carries; throws 401, or 429 after repeated failures. */
  check(request: FastifyRequest): string {
    const address = request.ip;
    const wait = this.failures.retryAfterSeconds(address);
    if (wait > 0) throw tooManyFailedLogins(wait);
    const match = BEARER.exec(soleAuthorization(request) ?? '');
    const digest = createHash('sha256')
      .update(match?.[1] ?? '')
      .digest();
    let label: string | null = null;
    for (const token of this.tokens) {
      if (timingSafeEqual(digest, token.sha256) && match) label ??= token.label;
    }
    if (label === null) {
      this.failures.record(address);
      request.log.warn({ address }, 'admin: refused token');
      throw adminUnauthenticated();
    }
    return label;
  }
}
