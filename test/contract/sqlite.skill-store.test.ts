/**
 * Runs the skill store conformance suite against SQLite on a real temporary file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteAccountStore } from '../../src/backend/sqlite/accounts.store';
import { openDatabase } from '../../src/backend/sqlite/database';
import { createSqliteSkillStore } from '../../src/backend/sqlite/skills.store';
import { describeSkillStoreConformance } from './skill-store.conformance';

describeSkillStoreConformance('sqlite', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-skills-'));
  const db = openDatabase(path.join(dir, 'prism.db'));
  return {
    accounts: createSqliteAccountStore(db),
    skills: createSqliteSkillStore(db),
    async close() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
