/**
 * The `prism` command line: run the server and manage keys and credits on the local data folder.
 *
 * Commands work on the database directly (no server needed) and print their result on the last stdout line,
 * so scripts can read it with `tail -n 1`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config/config';
import { createContainer, type Container } from '../container';
import { TIERS, type Tier } from '../domain/account';
import { AppError } from '../domain/errors';
import { defaultPredictionRequest } from '../domain/prediction';
import { toPredictionWire } from '../wire/predictions.schemas';
import { sniffMediaType } from '../lib/media-type';
import { serveMcpStdio } from '../mcp/mcp-stdio';
import { mcpServicesOf } from '../container/mcp-services';
import { main as serve } from '../../server';
import { skillsList, skillsPack, skillsPush, SKILLS_USAGE, SkillsUsageError } from './skills.commands';

const USAGE = `Usage:
  prism serve
  prism keys create --org ORG [--tier free|pro|enterprise] [--superuser] [--name NAME]
  prism keys revoke KEY_ID
  prism credits add --org ORG --usd AMOUNT
  prism extract FILE --domain DOMAIN [--schema SCHEMA.json] [--model MODEL] [--confidence] [--grounding]
  prism mcp                  (MCP server on stdin/stdout, acting as the owner of the data folder)
${SKILLS_USAGE}

Settings come from the environment (PRISM_DATA_DIR, PORT, HOST, …); see README.md.`;

class UsageError extends Error {}

export async function run(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    if (command === 'serve') {
      await serve();
      return -1;
    }
    if (command === 'keys' && sub === 'create') return await withContainer((c) => keysCreate(c, rest));
    if (command === 'keys' && sub === 'revoke') return await withContainer((c) => keysRevoke(c, rest));
    if (command === 'credits' && sub === 'add') return await withContainer((c) => creditsAdd(c, rest));
    if (command === 'extract') return await withContainer((c) => extract(c, argv.slice(1)));
    if (command === 'mcp') return await withContainer((c) => mcpStdio(c));
    if (command === 'skills' && sub === 'pack') return await skillsPack(loadConfig(), rest);
    if (command === 'skills' && sub === 'push') return await withContainer((c) => skillsPush(c, rest));
    if (command === 'skills' && sub === 'list') return await withContainer((c) => skillsList(c, rest));
    if (command === undefined || command === 'help' || command === '--help') {
      console.log(USAGE);
      return 0;
    }
    throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
  } catch (error) {
    if (error instanceof UsageError || error instanceof SkillsUsageError || error instanceof ConfigError) {
      console.error(`prism: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof AppError) {
      console.error(`prism: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

async function withContainer(work: (container: Container) => Promise<number>): Promise<number> {
  const config: Config = loadConfig();
  const container = await createContainer(config);
  try {
    const { ownerKey } = await container.start({ sweep: false, resumeJobs: false, backgroundCheckpoints: false });
    if (ownerKey) console.error(`Created the owner organisation; its key is in ${config.data.ownerKeyPath}`);
    return await work(container);
  } finally {
    await container.close();
  }
}

/** `prism mcp`: the MCP server over stdio, as the owner of the data folder. */
async function mcpStdio(container: Container): Promise<number> {
  const { config } = container;
  await serveMcpStdio({
    services: mcpServicesOf(container),
    version: container.version,
    owner: await container.services.accounts.ownerPrincipal(),
    baseUrl: config.server.publicUrl ?? `http://${config.server.host}:${config.server.port}`,
    logger: container.logger,
  });
  return 0;
}

async function keysCreate(container: Container, args: string[]): Promise<number> {
  const { values } = usage(() =>
    parseArgs({
      args,
      strict: true,
      options: {
        org: { type: 'string' },
        tier: { type: 'string' },
        superuser: { type: 'boolean' },
        name: { type: 'string' },
      },
    }),
  );
  const org = required(values.org, '--org');
  const tier = values.tier === undefined ? undefined : parseTier(values.tier);
  const created = await container.services.accounts.createKey({
    org,
    ...(tier ? { tier } : {}),
    superuser: values.superuser === true,
    ...(values.name ? { name: values.name } : {}),
  });
  console.error(`key ${created.keyId} for organisation ${created.orgName} (${created.orgId}), tier ${created.tier}`);
  console.log(created.key);
  return 0;
}

async function keysRevoke(container: Container, args: string[]): Promise<number> {
  const { positionals } = usage(() => parseArgs({ args, strict: true, allowPositionals: true, options: {} }));
  const keyId = required(positionals[0], 'KEY_ID');
  await container.services.accounts.revokeKey(keyId);
  console.log(`revoked ${keyId}`);
  return 0;
}

async function creditsAdd(container: Container, args: string[]): Promise<number> {
  const { values } = usage(() =>
    parseArgs({ args, strict: true, options: { org: { type: 'string' }, usd: { type: 'string' } } }),
  );
  const org = required(values.org, '--org');
  const usd = Number(required(values.usd, '--usd'));
  if (!Number.isFinite(usd) || usd <= 0) throw new UsageError('--usd must be a positive number');
  const result = await container.services.accounts.addCredits(org, usd);
  console.log(`balance ${result.balanceUsd.toFixed(6)} USD for organisation ${result.orgId}`);
  return 0;
}

/** `prism extract`: runs one prediction as the owner, synchronously, and prints the prediction's JSON. */
async function extract(container: Container, args: string[]): Promise<number> {
  const { values, positionals } = usage(() =>
    parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        domain: { type: 'string' },
        schema: { type: 'string' },
        model: { type: 'string' },
        confidence: { type: 'boolean' },
        grounding: { type: 'boolean' },
      },
    }),
  );
  const file = required(positionals[0], 'FILE');
  const bytes = await fs.readFile(file).catch(() => {
    throw new UsageError(`cannot read ${file}`);
  });
  const jsonSchema = values.schema ? await readJsonSchema(values.schema) : null;
  if (!values.domain && !jsonSchema) throw new UsageError('--domain or --schema is required');
  const family = sniffMediaType(bytes).family;
  const kind = family === 'unknown' ? 'image' : family;
  const owner = await container.services.accounts.ownerPrincipal();
  if (!owner) throw new UsageError('no owner organisation in this data folder');
  let lastReport = 0;
  const prediction = await container.services.predictions.create(
    owner,
    {
      kind,
      model: values.model ?? 'prism-1',
      domain: values.domain ?? null,
      callbackUrl: null,
      images: [bytes.toString('base64')],
      request: defaultPredictionRequest({
        jsonSchema,
        confidence: values.confidence === true,
        grounding: values.grounding === true,
        metadata: { source: 'cli', filename: path.basename(file) },
      }),
    },
    {
      onProgress: (done, total) => {
        if (total < 3 || Date.now() - lastReport < 1000) return;
        lastReport = Date.now();
        console.error(`prism: ${done}/${total} pages`);
      },
    },
  );
  console.log(JSON.stringify(toPredictionWire(prediction), null, 2));
  return prediction.status === 'completed' ? 0 : 1;
}

async function readJsonSchema(file: string): Promise<Record<string, unknown>> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new UsageError(`${file} is not a JSON schema object`);
}

/** Runs an argument parser, turning its complaints into usage errors. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function required(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${name} is required`);
  return value;
}

function parseTier(value: string): Tier {
  if (!(TIERS as readonly string[]).includes(value)) throw new UsageError(`--tier must be one of ${TIERS.join(', ')}`);
  return value as Tier;
}

if (require.main === module) {
  run(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
