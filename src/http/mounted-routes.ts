/**
 * The routes an express app has mounted, as `METHOD /path/:param` pairs with the declaration each handler carries
 * (src/http/api/route-declaration.ts), read from its router stack: what the OpenAPI document is built from, and what
 * the coverage test compares with it, so a route mounted without a declaration fails it.
 */
import type { Express } from 'express';
import { declarationOf, type RouteDeclaration } from './api/route-declaration';

interface Layer {
  rawPath?: unknown;
  handle?: { stack?: Layer[] };
  route?: { path: unknown; methods: Record<string, boolean>; stack?: Layer[] };
}

export interface MountedRoute {
  method: string;
  /** Express syntax, the mount prefixes joined (`/v1/files/:file_id`). */
  path: string;
  declaration?: RouteDeclaration;
}

export function mountedRoutes(app: Express): MountedRoute[] {
  const found = new Map<string, MountedRoute>();
  const walk = (stack: Layer[], prefix: string): void => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        const declaration = (layer.route.stack ?? []).map((l) => declarationOf(l.handle)).find((d) => d);
        for (const p of paths) {
          if (typeof p !== 'string') continue;
          for (const [method, on] of Object.entries(layer.route.methods)) {
            if (!on || method === '_all') continue;
            const path = `${prefix}${p === '/' && prefix !== '' ? '' : p}`;
            const key = `${method} ${path}`;
            // The first mounted handler answers: a later duplicate never runs.
            if (!found.has(key)) found.set(key, { method, path, ...(declaration ? { declaration } : {}) });
          }
        }
      } else if (layer.handle?.stack) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, `${prefix}${mount}`);
      }
    }
  };
  const router = (app as unknown as { router: { stack: Layer[] } }).router;
  walk(router.stack, '');
  return [...found.values()];
}
