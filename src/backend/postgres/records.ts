/**
 * The PostgreSQL records backend (`PRISM_DATABASE_URL`): one pool, every store on it, LangGraph checkpoints in their
 * own schema, migrations applied at start under an advisory lock unless `PRISM_DATABASE_MIGRATE=0` (then
 * `prism db migrate` does it, and a schema behind the code refuses to start).
 */
import type pg from 'pg';
import type { Config } from '../../config/config';
import type { Logger } from '../../lib/logger';
import { createPostgresLangGraphStore } from './langgraph.store';
import { createPostgresAccountStore } from './accounts.store';
import { createPostgresAgentStore, createPostgresProgramStore } from './agents.store';
import { createPostgresArtifactStore } from './artifacts.store';
import { createPostgresChatStore } from './chats.store';
import { appliedMigrations, createPool, migratePostgres, migrationFiles, withAdvisoryLock } from './database';
import { createPostgresEvaluationStore } from './evaluations.store';
import { createPostgresExecutionStore } from './executions.store';
import { createPostgresFeedbackStore } from './feedback.store';
import { createPostgresFileStore } from './files.store';
import { createPostgresCheckpointer } from './graph-checkpoints';
import { createPostgresOAuthStore } from './oauth.store';
import { createPostgresMcpServerStore } from './mcp-servers.store';
import { createPostgresPredictionStore } from './predictions.store';
import { createPostgresSkillStore } from './skills.store';
import { createPostgresWalletStore, type PostgresWalletStore } from './wallets.store';
import type { Stores } from '../../stores/types';
import { registerRawDatabase } from '../raw-database';
import type { RecordsBackend } from '../types';

/** Every store on one pool whose search_path is `schema` (also what `prism db copy` writes to). */
export function postgresStores(pool: pg.Pool, schema: string, logger?: Logger): Stores {
  const stores: Stores = {
    accounts: createPostgresAccountStore(pool),
    wallets: createPostgresWalletStore(pool, logger ? { logger } : {}),
    files: createPostgresFileStore(pool),
    predictions: createPostgresPredictionStore(pool),
    feedback: createPostgresFeedbackStore(pool),
    artifacts: createPostgresArtifactStore(pool),
    executions: createPostgresExecutionStore(pool),
    agents: createPostgresAgentStore(pool),
    programs: createPostgresProgramStore(pool),
    skills: createPostgresSkillStore(pool),
    chats: createPostgresChatStore(pool),
    evaluations: createPostgresEvaluationStore(pool),
    oauth: createPostgresOAuthStore(pool),
    mcpServers: createPostgresMcpServerStore(pool),
    langgraph: createPostgresLangGraphStore(pool),
  };
  registerRawDatabase(stores, { dialect: 'postgres', pool, schema });
  return stores;
}

/** Brings the schema up to date, or (migrations off) checks it already is. */
export async function preparePostgresSchema(pool: pg.Pool, schema: string, migrate: boolean): Promise<number[]> {
  if (migrate) return migratePostgres(pool, schema);
  const applied = new Set(await appliedMigrations(pool));
  const missing = migrationFiles().filter((m) => !applied.has(m.version));
  if (missing.length > 0) {
    throw new Error(
      `the PostgreSQL schema "${schema}" lacks migrations ${missing.map((m) => m.version).join(', ')}: ` +
        'run `prism db migrate` (or start with PRISM_DATABASE_MIGRATE=1)',
    );
  }
  return [];
}

export async function openPostgresRecords(config: Config, logger: Logger): Promise<RecordsBackend> {
  const { url, schema, poolMax, migrate } = config.database;
  if (!url) throw new Error('PRISM_DATABASE_URL is not set');
  const pool = createPool({ url, schema, max: poolMax });
  try {
    const applied = await preparePostgresSchema(pool, schema, migrate);
    if (applied.length > 0) logger.info('applied PostgreSQL migrations', { schema, versions: applied });
    const checkpoints = await createPostgresCheckpointer(url, schema);
    const stores = postgresStores(pool, schema, logger);
    const wallets = stores.wallets as PostgresWalletStore;
    return {
      dialect: 'postgres',
      stores,
      checkpointer: checkpoints.saver,
      startBackground: async () => undefined,
      exclusive: (name, work) => withAdvisoryLock(pool, `prism:${schema}:${name}`, () => work()),
      closers: [
        { name: 'database', run: () => (pool.ended ? undefined : pool.end()) },
        { name: 'checkpoint database', run: () => checkpoints.end() },
        // Run before the pool ends (closers run in reverse): queued debits written, allowances given back.
        { name: 'wallet allowances', run: () => (pool.ended ? undefined : wallets.close()) },
      ],
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}
