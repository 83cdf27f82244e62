/**
 * The routes an express app has mounted, as `METHOD /path/:param` pairs, read from its router stack: what the
 * OpenAPI coverage test compares with the document, so a route added without documentation fails it.
 */
import type { Express } from 'express';

interface Layer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

export interface MountedRoute {
  method: string;
  path: string;
}

export function mountedRoutes(app: Express): MountedRoute[] {
  const found = new Map<string, MountedRoute>();
  const walk = (stack: Layer[], prefix: string): void => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const p of paths) {
          if (typeof p !== 'string') continue;
          for (const [method, on] of Object.entries(layer.route.methods)) {
            if (!on || method === '_all') continue;
            const path = `${prefix}${p === '/' && prefix !== '' ? '' : p}`;
            found.set(`${method} ${path}`, { method, path });
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
