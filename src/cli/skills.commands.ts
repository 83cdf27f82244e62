/**
 * `prism skills pack|push|list`: package a skill folder with the server's own checks (so a bad bundle is caught
 * before it is uploaded), store it for an organisation in the local data folder, and list what is stored.
 *
 * Like the other commands they work on the data folder directly and print their result on the last stdout line.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config';
import type { Container } from '../container';
import type { Principal } from '../domain/account';
import { toSkillWire } from '../wire/skills.schemas';
import { packSkillFolder } from '../services/skills/skill-pack';
import { parseSkillZip } from '../services/skills/skill-view';

export const SKILLS_COMMANDS: { name: string; usage: string; about: string }[] = [
  {
    name: 'skills pack',
    usage: 'prism skills pack DIR [-o FILE.zip]',
    about: "zip a skill folder with the server's checks; prints the zip's path",
  },
  {
    name: 'skills push',
    usage: 'prism skills push DIR|FILE.zip --org ORG',
    about: 'store a folder or zip as a new version for an organisation; prints the skill as JSON',
  },
  {
    name: 'skills list',
    usage: 'prism skills list [--org ORG] [--all-versions]',
    about: 'the latest version of each skill an organisation sees (public ones without --org), as JSON',
  },
];

/** A command-line mistake: printed with the usage, exit code 2. */
export class SkillsUsageError extends Error {}

/** Packs and checks a folder; writes the zip and prints its path. Needs no data folder. */
export async function skillsPack(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = guarded(() =>
    parseArgs({ args, strict: true, allowPositionals: true, options: { output: { type: 'string', short: 'o' } } }),
  );
  const dir = requiredArg(positionals[0], 'DIR');
  const zip = await readBundle(dir);
  const { sha256, content } = await parseSkillZip(zip, config.skills);
  const output = path.resolve(values.output ?? `${path.basename(path.resolve(dir))}.zip`);
  await fs.writeFile(output, zip);
  console.error(
    `prism: ${content.name}: ${content.files.length} files, ${zip.length} bytes, sha256 ${sha256.slice(0, 8)}` +
      (content.schema ? ', schema.json' : '') +
      (content.config ? `, ${content.config.apiVersion} config` : ''),
  );
  console.log(output);
  return 0;
}

/** Stores a folder or zip as a new version for an organisation; prints the skill as JSON. */
export async function skillsPush(container: Container, args: string[]): Promise<number> {
  const { values, positionals } = guarded(() =>
    parseArgs({ args, strict: true, allowPositionals: true, options: { org: { type: 'string' } } }),
  );
  const source = requiredArg(positionals[0], 'DIR|FILE.zip');
  const principal = await orgPrincipal(container, requiredArg(values.org, '--org'));
  const record = await container.services.skills.createFromZip(principal, await readBundle(source));
  console.error(`prism: stored ${record.name} ${record.skillVersion}`);
  console.log(JSON.stringify(toSkillWire(record)));
  return 0;
}

/** Lists the latest version of each skill an organisation sees (public ones without --org), as one JSON line. */
export async function skillsList(container: Container, args: string[]): Promise<number> {
  const { values } = guarded(() =>
    parseArgs({
      args,
      strict: true,
      options: { org: { type: 'string' }, 'all-versions': { type: 'boolean' } },
    }),
  );
  const principal: Principal = values.org
    ? await orgPrincipal(container, values.org)
    : { kind: 'anonymous', clientIp: 'cli' };
  const skills = await container.services.skills.list(principal, {
    limit: 1000,
    offset: 0,
    orderBy: 'name',
    descending: false,
    grouped: values['all-versions'] !== true,
  });
  for (const s of skills) console.error(`${s.name}\t${s.skillVersion}\t${s.isPublic ? 'public' : 'org'}\t${s.id}`);
  console.log(JSON.stringify(skills.map(toSkillWire)));
  return 0;
}

async function readBundle(source: string): Promise<Buffer> {
  const stat = await fs.stat(source).catch(() => null);
  if (!stat) throw new SkillsUsageError(`cannot read ${source}`);
  return stat.isDirectory() ? packSkillFolder(source) : fs.readFile(source);
}

async function orgPrincipal(container: Container, org: string): Promise<Principal> {
  const found = await container.stores.accounts.findOrg(org);
  if (!found) throw new SkillsUsageError(`no organisation '${org}' (create one with: prism keys create --org ${org})`);
  return { kind: 'user', orgId: found.id, userId: 'cli', keyId: null, tier: found.tier, isSuperuser: true };
}

/** Runs an argument parser, turning its complaints into usage errors. */
function guarded<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new SkillsUsageError((error as Error).message);
  }
}

function requiredArg(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new SkillsUsageError(`${name} is required`);
  return value;
}
