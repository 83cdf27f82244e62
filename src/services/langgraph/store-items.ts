/**
 * The LangGraph long-term store on Prism: items under a namespace (labels), scoped to the organisation, with a TTL
 * in minutes, exact-match filters, and a natural-language `query` ranked by cosine similarity over vectors from
 * Prism's own text embedding engine (stored with the item when it is written). No vector index: a search reads the
 * namespace prefix's rows and scores them in the process (docs/langgraph.md gives the cost at 100k items).
 */
import { BadRequestError, NotFoundError } from '../../domain/errors';
import type { LangGraphStore } from '../../stores/types';
import { matches } from './threads';

export interface StoreItemWire {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  score?: number;
}

/** Prism's embedding engine as the store needs it: one unit vector per text. */
export type TextEmbedder = (texts: string[]) => Promise<Float32Array[]>;

const LABEL = /^[^.]{1,128}$/;
const MAX_VALUE_BYTES = 256 * 1024;

export function namespaceKey(namespace: unknown, param = 'namespace'): string {
  if (!Array.isArray(namespace) || namespace.length > 16) {
    throw new BadRequestError(`${param} must be a list of at most 16 labels.`, null, param);
  }
  for (const label of namespace) {
    if (typeof label !== 'string' || !LABEL.test(label)) {
      throw new BadRequestError(`${param} labels are 1-128 characters without '.'.`, null, param);
    }
  }
  return (namespace as string[]).join('.');
}

/** An item's record id: unique per (namespace, key), and free of NUL bytes (PostgreSQL text refuses them). */
const itemId = (ns: string, key: string): string => JSON.stringify([ns, key]);

/** The text an item is embedded from: its string fields (the `index` paths when given), else its JSON. */
function indexText(value: Record<string, unknown>, index: string[] | null): string {
  const fields = index ?? Object.keys(value);
  const parts = fields.map((f) => value[f.replace(/^\$\./, '')]).filter((v) => v !== undefined);
  const text = parts.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n');
  return text || JSON.stringify(value);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) s += a[i]! * b[i]!;
  return s;
}

export function createStoreItems(store: LangGraphStore, embed: TextEmbedder | null) {
  const toWire = (ns: string, body: Record<string, unknown>, createdAt: Date, updatedAt: Date): StoreItemWire => ({
    namespace: ns.split('.'),
    key: String(body.key),
    value: body.value as Record<string, unknown>,
    created_at: createdAt.toISOString(),
    updated_at: updatedAt.toISOString(),
  });

  return {
    async put(orgId: string, body: Record<string, unknown>): Promise<void> {
      const ns = namespaceKey(body.namespace);
      if (typeof body.key !== 'string' || body.key === '' || body.key.length > 512) {
        throw new BadRequestError('key must be a non-empty string (at most 512).', null, 'key');
      }
      if (!body.value || typeof body.value !== 'object' || Array.isArray(body.value)) {
        throw new BadRequestError('value must be an object.', null, 'value');
      }
      const value = body.value as Record<string, unknown>;
      if (Buffer.byteLength(JSON.stringify(value)) > MAX_VALUE_BYTES) {
        throw new BadRequestError(`value is over ${MAX_VALUE_BYTES} bytes.`, 'payload_too_large', 'value');
      }
      const ttl = body.ttl;
      if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !(ttl > 0))) {
        throw new BadRequestError('ttl is a positive number of minutes, or null.', null, 'ttl');
      }
      const index = Array.isArray(body.index) ? body.index.filter((f): f is string => typeof f === 'string') : null;
      const vector = body.index === false || !embed ? null : ((await embed([indexText(value, index)]))[0] ?? null);
      const id = itemId(ns, body.key);
      const existing = await store.get(orgId, 'item', id);
      const now = new Date();
      await store.put({
        orgId,
        kind: 'item',
        id,
        parent: ns,
        body: { key: body.key, value, ttl: ttl ?? null },
        vector,
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
        expiresAt: typeof ttl === 'number' ? new Date(now.getTime() + ttl * 60_000) : null,
      });
    },

    async get(orgId: string, namespace: string[], key: string): Promise<StoreItemWire> {
      const ns = namespaceKey(namespace);
      const found = await store.get(orgId, 'item', itemId(ns, key));
      if (!found) throw new NotFoundError('store_item', `${ns}/${key}`);
      return toWire(ns, found.body, found.createdAt, found.updatedAt);
    },

    async delete(orgId: string, namespace: unknown, key: unknown): Promise<void> {
      const ns = namespaceKey(namespace);
      if (typeof key !== 'string') throw new BadRequestError('key must be a string.', null, 'key');
      await store.delete(orgId, 'item', itemId(ns, key));
    },

    async search(
      orgId: string,
      q: {
        namespace_prefix?: unknown;
        filter?: Record<string, unknown> | null | undefined;
        query?: string | null | undefined;
      },
      page: { limit: number; offset: number },
    ): Promise<StoreItemWire[]> {
      const prefix = namespaceKey(q.namespace_prefix ?? [], 'namespace_prefix');
      const docs = (await store.list(orgId, 'item', { parentPrefix: prefix }, new Date())).filter((d) =>
        matches(d.body.value as Record<string, unknown>, q.filter),
      );
      if (!q.query || !embed) {
        return docs
          .reverse()
          .slice(page.offset, page.offset + page.limit)
          .map((d) => toWire(d.parent, d.body, d.createdAt, d.updatedAt));
      }
      const [probe] = await embed([q.query]);
      return docs
        .map((d) => ({ d, score: d.vector && probe ? dot(d.vector, probe) : 0 }))
        .sort((a, b) => b.score - a.score)
        .slice(page.offset, page.offset + page.limit)
        .map(({ d, score }) => ({ ...toWire(d.parent, d.body, d.createdAt, d.updatedAt), score }));
    },

    async namespaces(
      orgId: string,
      q: { prefix?: unknown; suffix?: unknown; max_depth?: number | null | undefined },
      page: { limit: number; offset: number },
    ): Promise<string[][]> {
      const prefix = q.prefix ? namespaceKey(q.prefix, 'prefix') : '';
      const suffix = q.suffix ? namespaceKey(q.suffix, 'suffix') : '';
      const seen = new Set<string>();
      for (const d of await store.list(orgId, 'item', { parentPrefix: prefix }, new Date())) {
        let labels = d.parent.split('.');
        if (q.max_depth) labels = labels.slice(0, q.max_depth);
        const joined = labels.join('.');
        if (suffix && !(joined === suffix || joined.endsWith(`.${suffix}`))) continue;
        seen.add(joined);
      }
      return [...seen]
        .sort()
        .slice(page.offset, page.offset + page.limit)
        .map((s) => s.split('.'));
    },
  };
}

export type StoreItems = ReturnType<typeof createStoreItems>;
