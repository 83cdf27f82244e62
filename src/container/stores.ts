/**
 * The storage part of the composition root: the SQLite file with every store on it, the blob folder, and the WAL
 * checkpoint worker a long-running process moves checkpoints to.
 *
 * Its closers release what it opened in the order it opened them (the container runs all closers in reverse):
 * the checkpoint worker stops, the gateway's queued wallet debits are written, then the database closes.
 */
import fs from 'node:fs/promises';
import { createFsBlobStore } from '../blobs/fs.blob-store';
import type { BlobStore } from '../blobs/types';
import type { Config } from '../config/config';
import type { CloseStep } from '../lib/close-all';
import type { Logger } from '../lib/logger';
import type { ArtifactStore } from '../stores/artifact-store';
import type { AgentStore, ExecutionStore, ProgramStore } from '../stores/execution-store';
import { createSqliteAccountStore } from '../stores/sqlite/accounts.store';
import { createSqliteAgentStore, createSqliteProgramStore } from '../stores/sqlite/agents.store';
import { createSqliteArtifactStore } from '../stores/sqlite/artifacts.store';
import { startBackgroundCheckpoints, type BackgroundCheckpoints } from '../stores/sqlite/background-checkpoints';
import { openDatabase, type SqliteDatabase } from '../stores/sqlite/database';
import { createSqliteExecutionStore } from '../stores/sqlite/executions.store';
import { createSqliteFeedbackStore } from '../stores/sqlite/feedback.store';
import { createSqliteFileStore } from '../stores/sqlite/files.store';
import { createSqlitePredictionStore } from '../stores/sqlite/predictions.store';
import { createSqliteSkillStore } from '../stores/sqlite/skills.store';
import { createSqliteChatStore } from '../stores/sqlite/chats.store';
import { createSqliteOAuthStore } from '../stores/sqlite/oauth.store';
import type { ChatStore } from '../stores/chat-store';
import { createSqliteWalletStore } from '../stores/sqlite/wallets.store';
import type {
  AccountStore,
  FeedbackStore,
  FileStore,
  OAuthStore,
  PredictionStore,
  SkillStore,
  WalletStore,
} from '../stores/types';

export interface Stores {
  accounts: AccountStore;
  wallets: WalletStore;
  files: FileStore;
  predictions: PredictionStore;
  feedback: FeedbackStore;
  artifacts: ArtifactStore;
  executions: ExecutionStore;
  agents: AgentStore;
  programs: ProgramStore;
  skills: SkillStore;
  chats: ChatStore;
  oauth: OAuthStore;
}

export interface StoragePart {
  db: SqliteDatabase;
  stores: Stores;
  blobs: BlobStore;
  /** Moves WAL checkpoints to a worker thread; a worker that does not start leaves them in commits (logged). */
  startCheckpoints(): Promise<void>;
  /** In the order things were opened; the container runs them in reverse. */
  closers: CloseStep[];
}

export async function createStoragePart(config: Config, logger: Logger): Promise<StoragePart> {
  await fs.mkdir(config.data.dir, { recursive: true });
  const db = openDatabase(config.data.dbPath);
  let checkpoints: BackgroundCheckpoints | null = null;

  // Gateway debits are written behind (PRISM_WALLET_FLUSH_MS); close() writes what is queued before the file closes.
  const wallets = createSqliteWalletStore(db, { logger, flushMs: config.gateway.walletFlushMs });
  const stores: Stores = {
    accounts: createSqliteAccountStore(db),
    wallets,
    files: createSqliteFileStore(db),
    predictions: createSqlitePredictionStore(db),
    feedback: createSqliteFeedbackStore(db),
    artifacts: createSqliteArtifactStore(db),
    executions: createSqliteExecutionStore(db),
    agents: createSqliteAgentStore(db),
    programs: createSqliteProgramStore(db),
    skills: createSqliteSkillStore(db),
    chats: createSqliteChatStore(db),
    oauth: createSqliteOAuthStore(db),
  };
  const blobs = createFsBlobStore(config.data.blobDir);

  return {
    db,
    stores,
    blobs,
    async startCheckpoints() {
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
