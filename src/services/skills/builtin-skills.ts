/**
 * Seeds the built-in skills (`skills/<name>/` folders) as public skills at start.
 *
 * Each folder is packed reproducibly, so unchanged content gives the same bytes and is skipped (the store keeps one
 * version per content), while changed content becomes a new public version of the same name. A broken folder is
 * logged and skipped: it must not keep the server from starting.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../lib/logger';
import { packSkillFolder } from './skill-pack';
import type { SkillsService } from './skills.service';

export interface SeedReport {
  created: string[];
  unchanged: string[];
  failed: string[];
}

export async function seedBuiltinSkills(skills: SkillsService, dir: string, logger: Logger): Promise<SeedReport> {
  const report: SeedReport = { created: [], unchanged: [], failed: [] };
  let folders: string[];
  try {
    folders = (await fs.readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report;
    throw error;
  }
  for (const folder of folders) {
    try {
      const { record, created } = await skills.createPublic(await packSkillFolder(path.join(dir, folder)));
      (created ? report.created : report.unchanged).push(`${record.name}@${record.skillVersion}`);
    } catch (error) {
      report.failed.push(folder);
      logger.warn('built-in skill not seeded', {
        folder,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  if (report.created.length > 0) logger.info('seeded built-in skills', { created: report.created });
  return report;
}
