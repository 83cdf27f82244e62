/**
 * What middleware attaches to a request: its id and, after auth, its principal.
 */
import type { Request } from 'express';
import type { Principal } from '../domain/account';
import { AuthenticationRequiredError } from '../domain/errors';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    principal?: Principal;
  }
}

/** The authenticated principal; throws if the auth middleware did not run (a wiring bug, reported as 500). */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('auth middleware did not run for this route');
  return req.principal;
}

/** The principal, which must be an identified user (or the single-user owner). */
export function userOf(req: Request): Principal {
  const principal = principalOf(req);
  if (principal.kind !== 'user') throw new AuthenticationRequiredError();
  return principal;
}
