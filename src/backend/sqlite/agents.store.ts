/**
 * SQLite AgentStore (named agents, unique per organisation by `<name>:<version>`) and ProgramStore (compiled skill
 * programs, one per skill version and input signature).
 */
import type { SkillProgram } from '../../domain/execution';
import type { AgentStore, ProgramStore } from '../../stores/types/execution';
import type { SqliteDatabase } from './database';
import { type ProgramRow, type AgentRow, toAgent } from '../../stores/rows/agents.rows';

export function createSqliteAgentStore(db: SqliteDatabase): AgentStore {
  const insertRow = db.prepare(
    `INSERT INTO agents (id, org_id, name, version, description, config_json, inputs_json, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (org_id, name, version) DO NOTHING`,
  );
  const byId = db.prepare<[string, string], AgentRow>('SELECT * FROM agents WHERE org_id = ? AND id = ?');
  const byName = db.prepare<[string, string, string], AgentRow>(
    'SELECT * FROM agents WHERE org_id = ? AND name = ? AND version = ?',
  );
  const newestByName = db.prepare<[string, string], AgentRow>(
    'SELECT * FROM agents WHERE org_id = ? AND name = ? ORDER BY created_at DESC, rowid DESC LIMIT 1',
  );
  const byPrompt = db.prepare<[string, string], AgentRow>(
    `SELECT * FROM agents WHERE org_id = ? AND json_extract(config_json, '$.prompt') = ?
     ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  );
  const all = db.prepare<[string], AgentRow>(
    'SELECT * FROM agents WHERE org_id = ? ORDER BY created_at DESC, rowid DESC',
  );
  return {
    async insert(a) {
      const { changes } = insertRow.run(
        a.id,
        a.orgId,
        a.name,
        a.version,
        a.description,
        JSON.stringify(a.config),
        a.inputs === null ? null : JSON.stringify(a.inputs),
        a.createdAt.toISOString(),
      );
      return changes === 1;
    },
    async get(orgId, id) {
      const row = byId.get(orgId, id);
      return row ? toAgent(row) : null;
    },
    async findByName(orgId, name, version) {
      const row = version === null ? newestByName.get(orgId, name) : byName.get(orgId, name, version);
      return row ? toAgent(row) : null;
    },
    async findByPrompt(orgId, prompt) {
      const row = byPrompt.get(orgId, prompt);
      return row ? toAgent(row) : null;
    },
    async list(orgId) {
      return all.all(orgId).map(toAgent);
    },
  };
}

export function createSqliteProgramStore(db: SqliteDatabase): ProgramStore {
  const select = db.prepare<[string, string, string], ProgramRow>(
    'SELECT * FROM skill_programs WHERE skill_id = ? AND skill_version = ? AND signature = ?',
  );
  const upsert = db.prepare(
    `INSERT INTO skill_programs (skill_id, skill_version, signature, program_json, source_execution_id, verified_at,
                                 created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (skill_id, skill_version, signature) DO UPDATE SET program_json = excluded.program_json,
       source_execution_id = excluded.source_execution_id, verified_at = excluded.verified_at,
       created_at = excluded.created_at`,
  );
  return {
    async get(skillId, skillVersion, signature) {
      const row = select.get(skillId, skillVersion, signature);
      if (!row) return null;
      return {
        skillId: row.skill_id,
        skillVersion: row.skill_version,
        signature: row.signature,
        program: JSON.parse(row.program_json) as SkillProgram['program'],
        sourceExecutionId: row.source_execution_id,
        verifiedAt: row.verified_at ? new Date(row.verified_at) : null,
        createdAt: new Date(row.created_at),
      };
    },
    async put(p) {
      upsert.run(
        p.skillId,
        p.skillVersion,
        p.signature,
        JSON.stringify(p.program),
        p.sourceExecutionId,
        p.verifiedAt?.toISOString() ?? null,
        p.createdAt.toISOString(),
      );
    },
  };
}
