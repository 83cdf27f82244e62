/**
 * The hub: the catalogue of domains (e.g. `document.receipt`) with their JSON schemas, read once at start.
 *
 * `schema_hash` is the first 8 hex characters of the sha256 of the schema serialised with sorted keys, as the
 * open-source hub computes it, so a client can tell when a domain's schema changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { NotFoundError } from '../../domain/errors';
import { INTERFACE_VERSION } from '../../domain/version';
import { schemaHash } from '../../lib/schema-hash';
import { objectSchema, type HubField } from './field-schema';

interface CatalogueEntry {
  domain: string;
  description?: string | null;
  schema_title?: string | null;
  schema_description?: string | null;
  supported_inputs?: string[];
  tags?: string[];
  sample_data?: string[];
  prompt?: string | null;
  fields: HubField[];
}

export interface HubDomain {
  domain: string;
  name: string;
  description: string;
  supportedInputs: string[];
  tags: string[];
  sampleData: string[];
  prompt: string;
  jsonSchema: Record<string, unknown>;
  schemaHash: string;
}

export interface HubSchema {
  domain: string;
  description: string;
  schema_version: string;
  schema_hash: string;
  gql_stmt: string;
  json_schema: Record<string, unknown>;
}

export interface HubService {
  version: string;
  list(): HubDomain[];
  /**
   * @throws NotFoundError (`domain_not_found`) for an unknown domain, suggesting the full names it may mean
   *   (`receipt` → `document.receipt`).
   */
  get(domain: string): HubDomain;
  find(domain: string): HubDomain | null;
  schema(domain: string, gqlStmt?: string | null): HubSchema;
}

const CATALOGUE_FILES = ['hub-domains.json', 'platform-domains.json'];

/** Reads the bundled catalogue files beside this module. */
export function loadCatalogue(dir = __dirname): CatalogueEntry[] {
  return CATALOGUE_FILES.flatMap(
    (name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CatalogueEntry[],
  );
}

export function createHubService(entries: CatalogueEntry[] = loadCatalogue()): HubService {
  const domains = new Map<string, HubDomain>();
  for (const entry of entries) {
    const jsonSchema = objectSchema(
      entry.fields,
      entry.schema_title ?? titleOf(entry.domain),
      entry.schema_description,
    );
    domains.set(entry.domain, {
      domain: entry.domain,
      name: entry.schema_title ?? titleOf(entry.domain),
      description: entry.description ?? '',
      supportedInputs: entry.supported_inputs ?? [],
      tags: entry.tags ?? [],
      sampleData: entry.sample_data ?? [],
      prompt: entry.prompt ?? '',
      jsonSchema,
      schemaHash: schemaHash(jsonSchema),
    });
  }
  const find = (domain: string): HubDomain | null => domains.get(domain) ?? null;
  const get = (domain: string): HubDomain => {
    const found = find(domain);
    if (!found) throw new NotFoundError('domain', domain, suggestionFor(domain, [...domains.keys()]));
    return found;
  };
  return {
    version: INTERFACE_VERSION,
    list: () => [...domains.values()],
    get,
    find,
    schema(domain, gqlStmt) {
      const d = get(domain);
      return {
        domain: d.domain,
        description: d.description,
        schema_version: INTERFACE_VERSION,
        schema_hash: d.schemaHash,
        gql_stmt: gqlStmt ?? '',
        json_schema: d.jsonSchema,
      };
    },
  };
}

function titleOf(domain: string): string {
  const last = domain.split('.').pop() ?? domain;
  return last
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** Domains a name not in the catalogue may mean: those whose last part is it (`receipt`), else that contain it. */
export function suggestionFor(name: string, known: string[]): string {
  const wanted = name.trim().toLowerCase();
  const byLastPart = known.filter((d) => d.split('.').pop() === wanted);
  const containing = wanted.length >= 3 ? known.filter((d) => d.includes(wanted)) : [];
  const picks = (byLastPart.length > 0 ? byLastPart : containing).slice(0, 5);
  if (picks.length === 0) return 'GET /v1/hub/domains lists the domains';
  return `did you mean ${picks.map((d) => `'${d}'`).join(' or ')}? (GET /v1/hub/domains lists them all)`;
}
