/**
 * PostgreSQL AgentStore (named agents, `<name>:<version>` unique per organisation) and ProgramStore (compiled skill
 * programs per skill version and input signature).
 */
import type pg from 'pg';
import type { SkillProgram } from '../../domain/execution';
import { toAgent, type AgentRow, type ProgramRow } from '../../stores/rows/agents.rows';
import type { AgentStore, ProgramStore } from '../../stores/types/execution';

export function createPostgresAgentStore(pool: pg.Pool): AgentStore {
  const first = async (sql: string, params: unknown[]) => {
    const row = (await pool.query<AgentRow>(sql, params)).rows[0];
    return row ? toAgent(row) : null;
  };
  return {
    async insert(a) {
      const { rowCount } = await pool.query(
        `INSERT INTO agents (id, org_id, name, version, description, config_json, inputs_json, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (org_id, name, version) DO NOTHING`,
        [
          a.id,
          a.orgId,
          a.name,
          a.version,
          a.description,
          JSON.stringify(a.config),
          a.inputs === null ? null : JSON.stringify(a.inputs),
          a.createdAt.toISOString(),
        ],
      );
      return rowCount === 1;
    },
    get: (orgId, id) => first('SELECT * FROM agents WHERE org_id = $1 AND id = $2', [orgId, id]),
    findByName: (orgId, name, version) =>
      version === null
        ? first('SELECT * FROM agents WHERE org_id = $1 AND name = $2 ORDER BY created_at DESC, seq DESC LIMIT 1', [
            orgId,
            name,
          ])
        : first('SELECT * FROM agents WHERE org_id = $1 AND name = $2 AND version = $3', [orgId, name, version]),
    findByPrompt: (orgId, prompt) =>
      first(
        `SELECT * FROM agents WHERE org_id = $1 AND config_json->>'prompt' = $2
          ORDER BY created_at DESC, seq DESC LIMIT 1`,
        [orgId, prompt],
      ),
    async list(orgId) {
      const { rows } = await pool.query<AgentRow>(
        'SELECT * FROM agents WHERE org_id = $1 ORDER BY created_at DESC, seq DESC',
        [orgId],
      );
      return rows.map(toAgent);
    },
  };
}

export function createPostgresProgramStore(pool: pg.Pool): ProgramStore {
  return {
    async get(skillId, skillVersion, signature) {
      const row = (
        await pool.query<ProgramRow>(
          'SELECT * FROM skill_programs WHERE skill_id = $1 AND skill_version = $2 AND signature = $3',
          [skillId, skillVersion, signature],
        )
      ).rows[0];
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
      await pool.query(
        `INSERT INTO skill_programs (skill_id, skill_version, signature, program_json, source_execution_id,
                                     verified_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (skill_id, skill_version, signature) DO UPDATE SET program_json = excluded.program_json,
           source_execution_id = excluded.source_execution_id, verified_at = excluded.verified_at,
           created_at = excluded.created_at`,
        [
          p.skillId,
          p.skillVersion,
          p.signature,
          JSON.stringify(p.program),
          p.sourceExecutionId,
          p.verifiedAt?.toISOString() ?? null,
          p.createdAt.toISOString(),
        ],
      );
    },
  };
}
