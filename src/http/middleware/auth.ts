/**
 * Auth middleware: resolves the Authorization header into `req.principal` for one surface.
 * Routes that need an identified caller use `userOf(req)`, which raises 401 for anonymous callers.
 */
import type { RequestHandler } from 'express';
import type { AuthService, Surface } from '../../services/auth.service';

export function authenticate(auth: AuthService, surface: Surface): RequestHandler {
  return (req, _res, next) => {
    auth
      .authenticate(req.get('authorization'), { clientIp: req.ip ?? req.socket.remoteAddress ?? 'unknown', surface })
      .then((principal) => {
        req.principal = principal;
        next();
      })
      .catch(next);
  };
}
