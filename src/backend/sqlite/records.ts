/**
 * The default records backend: every store and the LangGraph checkpointer on one SQLite file in the data folder,
 * plus the WAL checkpoint worker a long-running process moves checkpoints to.
 *
 * Its closers release what it opened in the order it opened them (the container runs all closers in reverse):
 * the checkpoint worker stops, the gateway's queued wallet debits are written, then the database closes.
 */
import fs from 'node:fs/promises';
import type { Config } from '../../config/config';
import type { Logger } from '../../lib/logger';
import { createSqliteLangGraphStore } from './langgraph.store';
import { createSqliteAccountStore } from './accounts.store';
import { createSqliteAgentStore, createSqliteProgramStore } from './agents.store';
import { createSqliteArtifactStore } from './artifacts.store';
import { startBackgroundCheckpoints, type BackgroundCheckpoints } from './background-checkpoints';
import { createSqliteChatStore } from './chats.store';
import { openDatabase, type SqliteDatabase } from './database';
import { createSqliteEvaluationStore } from './evaluations.store';
import { createSqliteExecutionStore } from './executions.store';
import { createSqliteFeedbackStore } from './feedback.store';
import { createSqliteFileStore } from './files.store';
import { LeanSqliteSaver } from './graph-checkpoints';
import { createSqlitePredictionStore } from './predictions.store';
import { createSqliteSkillStore } from './skills.store';
import { createSqliteOAuthStore } from './oauth.store';
import { createSqliteMcpServerStore } from './mcp-servers.store';
import { createSqliteWalletStore } from './wallets.store';
import type { Stores } from '../../stores/types';
import { registerRawDatabase } from '../raw-database';
import type { RecordsBackend } from '../types';

/** Every store on one open SQLite database (also what `prism db copy` reads from). */
export function sqliteStores(db: SqliteDatabase, options: { logger?: Logger; walletFlushMs?: number } = {}): Stores {
  const stores: Stores = {
    accounts: createSqliteAccountStore(db),
    // Gateway debits are written behind (PRISM_WALLET_FLUSH_MS); close() writes what is queued before the file closes.
    wallets: createSqliteWalletStore(db, {
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.walletFlushMs === undefined ? {} : { flushMs: options.walletFlushMs }),
    }),
    files: createSqliteFileStore(db),
    predictions: createSqlitePredictionStore(db),
    feedback: createSqliteFeedbackStore(db),
    artifacts: createSqliteArtifactStore(db),
    executions: createSqliteExecutionStore(db),
    agents: createSqliteAgentStore(db),
    programs: createSqliteProgramStore(db),
    skills: createSqliteSkillStore(db),
    chats: createSqliteChatStore(db),
    evaluations: createSqliteEvaluationStore(db),
    oauth: createSqliteOAuthStore(db),
    mcpServers: createSqliteMcpServerStore(db),
    langgraph: createSqliteLangGraphStore(db),
  };
  registerRawDatabase(stores, { dialect: 'sqlite', db });
  return stores;
}

export async function openSqliteRecords(config: Config, logger: Logger): Promise<RecordsBackend> {
  await fs.mkdir(config.data.dir, { recursive: true });
  const db = openDatabase(config.data.dbPath);
  let checkpoints: BackgroundCheckpoints | null = null;
  const stores = sqliteStores(db, { logger, walletFlushMs: config.gateway.walletFlushMs });
  const wallets = stores.wallets as ReturnType<typeof createSqliteWalletStore>;

  return {
    dialect: 'sqlite',
    stores,
    checkpointer: new LeanSqliteSaver(db),
    exclusive: (_name, work) => work(),
    async startBackground() {
      if (config.data.walCheckpointMs <= 0 || checkpoints !== null) return;
      try {
        checkpoints = await startBackgroundCheckpoints(db, config.data.dbPath, {
          intervalMs: config.data.walCheckpointMs,
          logger,
        });
      } catch (error) {
        logger.warn('WAL checkpoints stay in commits: the worker did not start', { error: String(error) });
      }
    },
    closers: [
      { name: 'database', run: () => (db.open ? db.close() : undefined) },
      { name: 'wallet debits', run: () => (db.open ? wallets.flush() : undefined) },
      { name: 'checkpoints', run: () => checkpoints?.stop() },
    ],
  };
}
