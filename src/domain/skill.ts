/**
 * Skills as the rest of Prism sees them: the stored record of one version, the parsed view the runtime reads, and
 * the ways a caller names a skill.
 *
 * The skills service owns storage and parsing; the agent runtime, extraction and MCP only ever receive a
 * {@link ParsedSkill} through a {@link SkillResolver}, so none of them reads a zip or a table.
 */
import type { Principal } from './account';

export type SkillStatus = 'completed' | 'pending' | 'failed';

/** One stored version of a skill. A new version is a new record with the same name. */
export interface SkillRecord {
  id: string;
  name: string;
  /** `YYYYMMDD-<first 8 hex of the zip's sha256>`. */
  skillVersion: string;
  description: string;
  /** null for public (built-in) skills. */
  orgId: string | null;
  isPublic: boolean;
  status: SkillStatus;
  /** sha256 hex of the zip bytes; the blob store key. */
  contentHash: string;
  sizeBytes: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface SkillFileEntry {
  /** Normalised POSIX path inside the bundle. */
  path: string;
  sizeBytes: number;
}

/** `prism.yaml` (or the hosted platform's own file name), as far as the runtime reads it. */
export interface SkillConfig {
  apiVersion: string | null;
  metadata: Record<string, unknown>;
  model: string | null;
  toolsets: string[];
  /** The Mermaid `stateDiagram-v2` source, when declared. */
  graph: string | null;
  /** State names of `graph` in the order the loop follows them (start → end), empty without a graph. */
  graphStates: string[];
  /**
   * `pauses:` in prism.yaml: a question per graph state, asked before the state is worked on (the run pauses until
   * a person answers; runs that cannot pause skip the question). Empty when none is declared.
   */
  pauses?: Record<string, string>;
  plan: unknown;
}

/** One version of a skill, unpacked and checked: what the runtime, extraction and MCP read. */
export interface ParsedSkill {
  record: SkillRecord;
  frontMatter: Record<string, unknown>;
  /** The Markdown body of SKILL.md (front matter removed). */
  instructions: string;
  /** `schema.json`, when present. */
  schema: Record<string, unknown> | null;
  /** `schemas/<type>.json` by type, when present. */
  schemas: Record<string, Record<string, unknown>>;
  config: SkillConfig | null;
  files: SkillFileEntry[];
  /** The bytes of one bundle file; a path not in `files` rejects with a not-found error. */
  readFile(path: string): Promise<Buffer>;
}

/**
 * How a reference names a version: `latest`, an exact `skill_version` (`YYYYMMDD-<8 hex>`), or a 1-based revision
 * number as a string (`"2"`: the second version created under that name).
 */
export type SkillVersionSelector = string;

/** How requests name a skill (`config.skills`, chat `skills`, MCP tools). `id` may also hold a name. */
export type SkillReference =
  | { kind: 'id'; id: string; version: SkillVersionSelector }
  | { kind: 'name'; name: string; version: SkillVersionSelector }
  | { kind: 'inline'; name: string | null; description: string | null; zip: Buffer };

/**
 * A skill reference as records store it (executions, predictions run through the agent runtime): by id or name and
 * version, or an inline zip kept as an artifact, so a job resumed after a restart resolves the same skill.
 */
export type StoredSkillRef =
  | { kind: 'id'; id: string; version: string }
  | { kind: 'name'; name: string; version: string }
  | { kind: 'inline'; artifactId: string; name: string | null; description: string | null };

/** Resolves a reference for a caller: their organisation's skills plus public ones; anything else is not found. */
export interface SkillResolver {
  resolve(principal: Principal, reference: SkillReference): Promise<ParsedSkill>;
}
