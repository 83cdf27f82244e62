/**
 * The `prism` command line: run the server and manage keys and credits on the local data folder.
 *
 * Commands work on the database directly (no server needed) and print their result on the last stdout line,
 * so scripts can read it with `tail -n 1`.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadCommandConfig, loadConfig, type Config } from '../config/config';
import { createContainer, type Container } from '../container';
import { TIERS, type Tier } from '../domain/account';
import { AppError } from '../domain/errors';
import { defaultPredictionRequest } from '../domain/prediction';
import { toPredictionWire } from '../wire/predictions.schemas';
import { sniffMediaType } from '../lib/media-type';
import { serveMcpStdio } from '../mcp/mcp-stdio';
import { mcpServicesOf } from '../container/mcp-services';
import { main as serve } from '../../server';
import { BUDGET_PERIODS, type BudgetPeriod } from '../services/admin/key-policies';
import { DB_COMMANDS, dbCopy, dbMigrate, DbUsageError } from './db.commands';
import { MODELS_COMMANDS, modelsCheck, ModelsUsageError } from './models.commands';
import { isClusterWorker, missingSharedBackends, runPrimary, workersArgument } from './serve-workers';
import { SKILLS_COMMANDS, skillsList, skillsPack, skillsPush, SkillsUsageError } from './skills.commands';

/** Each command's usage line and what it does: `prism CMD --help` prints these and starts nothing. */
const COMMANDS: { name: string; usage: string; about: string }[] = [
  {
    name: 'serve',
    usage: 'prism serve [--workers N]',
    about:
      'run the server (settings from the environment; see docs/configuration.md); --workers N > 1 runs one ' +
      'process per core and needs PRISM_DATABASE_URL and PRISM_REDIS_URL (docs/deployment.md)',
  },
  {
    name: 'keys create',
    usage:
      'prism keys create --org ORG [--tier free|pro|enterprise] [--superuser] [--name NAME] [--expires-at TIME] ' +
      '[--models M1,M2] [--budget-usd USD] [--budget-period daily|monthly|none]',
    about:
      'create a key (and the organisation if new), optionally expiring, limited to some models and with a budget ' +
      '(docs/admin.md); prints the key alone on stdout, its id on stderr',
  },
  { name: 'keys list', usage: 'prism keys list --org ORG', about: "list an organisation's keys (never the secrets)" },
  { name: 'keys revoke', usage: 'prism keys revoke KEY_ID', about: 'revoke a key: it gets 401 from then on' },
  { name: 'credits add', usage: 'prism credits add --org ORG --usd AMOUNT', about: "top up an organisation's wallet" },
  { name: 'credits show', usage: 'prism credits show --org ORG', about: "an organisation's balance" },
  {
    name: 'extract',
    usage: 'prism extract FILE --domain DOMAIN|--schema SCHEMA.json [--model MODEL] [--confidence] [--grounding]',
    about: 'extract one file as the owner, locally; prints the prediction as JSON, progress on stderr',
  },
  {
    name: 'mcp',
    usage: 'prism mcp [--toolsets extraction,files,hub,skills,agents,agent_tools,run|all]',
    about: 'serve MCP on stdin/stdout, acting as the owner of the data folder (default toolsets: extraction,files,run)',
  },
  ...SKILLS_COMMANDS,
  ...MODELS_COMMANDS,
  ...DB_COMMANDS,
];

const USAGE = `Usage:
${COMMANDS.map((c) => `  ${c.usage}`).join('\n')}

\`prism COMMAND --help\` explains one command. Commands other than serve work on the data folder directly
(PRISM_DATA_DIR, default ./data of the current folder), with no server needed, and print their result last.`;

/** The help of the commands `words` names (`keys` gives every keys command); the whole usage if none. */
function helpFor(words: string[]): string {
  const named = words.join(' ');
  const matching = COMMANDS.filter((c) => c.name === named || (named !== '' && c.name.startsWith(`${named} `)));
  if (matching.length === 0) return USAGE;
  return matching.map((c) => `Usage: ${c.usage}\n  ${c.about}`).join('\n\n');
}

const wantsHelp = (argv: string[]): boolean => argv.some((a) => a === '--help' || a === '-h');

class UsageError extends Error {}

/** How the audit log of the operator's API (docs/admin.md) names a change made with this command line. */
const CLI_ACTOR = 'cli';

export async function run(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === undefined || command === 'help' || wantsHelp(argv)) {
    const words = (command === 'help' ? argv.slice(1) : argv).filter((a) => !a.startsWith('-')).slice(0, 2);
    console.log(helpFor(words.filter((w, i) => i === 0 || COMMANDS.some((c) => c.name === `${words[0]} ${w}`))));
    return 0;
  }
  try {
    if (command === 'serve') {
      const workers = usage(() => workersArgument(argv.slice(1)));
      if (workers > 1 && !isClusterWorker()) return await serveWorkers(workers);
      await serve();
      return -1;
    }
    if (command === 'keys' && sub === 'create') return await withAccounts((c) => keysCreate(c, rest));
    if (command === 'keys' && sub === 'list') return await withAccounts((c) => keysList(c, rest));
    if (command === 'keys' && sub === 'revoke') return await withAccounts((c) => keysRevoke(c, rest));
    if (command === 'credits' && sub === 'add') return await withAccounts((c) => creditsAdd(c, rest));
    if (command === 'credits' && sub === 'show') return await withAccounts((c) => creditsShow(c, rest));
    if (command === 'extract') return await withContainer((c) => extract(c, argv.slice(1)));
    if (command === 'mcp') {
      const toolsets = mcpToolsets(argv.slice(1));
      return await withContainer((c) => mcpStdio(c, toolsets), loadConfig());
    }
    if (command === 'models' && sub === 'check') return await modelsCheck(loadCommandConfig(), rest);
    if (command === 'skills' && sub === 'pack') return await skillsPack(loadCommandConfig(), rest);
    if (command === 'skills' && sub === 'push') return await withContainer((c) => skillsPush(c, rest));
    if (command === 'skills' && sub === 'list') return await withContainer((c) => skillsList(c, rest));
    if (command === 'db' && sub === 'migrate') return await dbMigrate(loadConfig());
    if (command === 'db' && sub === 'copy') return await dbCopy(loadConfig(), rest);
    throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof SkillsUsageError ||
      error instanceof DbUsageError ||
      error instanceof ModelsUsageError ||
      error instanceof ConfigError
    ) {
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

/** `prism serve --workers N` with N > 1: checks the shared backends, then runs the cluster's primary. */
async function serveWorkers(workers: number): Promise<number> {
  const missing = missingSharedBackends(loadConfig());
  if (missing.length > 0) {
    console.error(
      `prism: --workers ${workers} runs ${workers} replicas, which must share their state; set ${missing.join(' and ')}.\n` +
        'Without them each process would keep its own rate limits, guest spend, wallet holds and job queue. ' +
        'See docs/deployment.md.',
    );
    return 2;
  }
  return runPrimary(workers);
}

/** `prism mcp [--toolsets a,b]`: the toolsets flag, if given. */
function mcpToolsets(args: string[]): string | undefined {
  const { values } = usage(() =>
    parseArgs({ args, options: { toolsets: { type: 'string' } }, allowPositionals: false, strict: true }),
  );
  return values.toolsets;
}

/**
 * Key and credit commands act on an existing data folder only: run from the wrong folder they would otherwise
 * create a new one (with its own owner) and report on that. An empty folder is set up, as `serve` would.
 */
async function withAccounts(work: (container: Container) => Promise<number>): Promise<number> {
  const config = loadCommandConfig();
  if (!existsSync(config.data.dir)) {
    throw new UsageError(
      `no Prism data folder at ${config.data.dir}; run this where the server keeps its data, or set PRISM_DATA_DIR`,
    );
  }
  return withContainer(work, config);
}

async function withContainer(
  work: (container: Container) => Promise<number>,
  config: Config = loadCommandConfig(),
): Promise<number> {
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
async function mcpStdio(container: Container, toolsets: string | undefined): Promise<number> {
  const { config } = container;
  await serveMcpStdio({
    services: mcpServicesOf(container),
    version: container.version,
    owner: await container.services.accounts.ownerPrincipal(),
    baseUrl: config.server.publicUrl ?? `http://${config.server.host}:${config.server.port}`,
    logger: container.logger,
    toolsets: { value: toolsets ?? config.mcp.toolsets, fromFlag: toolsets !== undefined },
    maxMessageBytes: config.mcp.maxJsonBytes,
    maxFileBytes: config.limits.maxUploadBytes,
    workBudget: config.limits.workBudget,
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
        'expires-at': { type: 'string' },
        models: { type: 'string' },
        'budget-usd': { type: 'string' },
        'budget-period': { type: 'string' },
      },
    }),
  );
  const org = required(values.org, '--org');
  const tier = values.tier === undefined ? undefined : parseTier(values.tier);
  const expiresAt = values['expires-at'] === undefined ? undefined : new Date(values['expires-at']);
  if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO-8601 time');
  const budgetUsd = values['budget-usd'] === undefined ? undefined : Number(values['budget-usd']);
  if (budgetUsd !== undefined && !(Number.isFinite(budgetUsd) && budgetUsd >= 0)) {
    throw new UsageError('--budget-usd must be a number of dollars, 0 or more');
  }
  const period = values['budget-period'];
  if (period !== undefined && !(BUDGET_PERIODS as readonly string[]).includes(period)) {
    throw new UsageError(`--budget-period must be one of ${BUDGET_PERIODS.join(', ')}`);
  }
  // The same service as POST /v1/admin/keys (docs/admin.md); the audit log names the CLI as the actor.
  const created = await container.services.admin.createKey(CLI_ACTOR, {
    org,
    ...(tier ? { tier } : {}),
    superuser: values.superuser === true,
    ...(values.name ? { name: values.name } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    ...(values.models !== undefined ? { allowedModels: values.models.split(',').filter((m) => m !== '') } : {}),
    ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    ...(period !== undefined ? { budgetPeriod: period as BudgetPeriod } : {}),
  });
  console.error(`key ${created.id} for organisation ${created.org} (${created.org_id}), tier ${created.tier}`);
  // The id (what `keys revoke` takes) on stderr, the secret alone on stdout: `prism keys create … > acme.key`.
  console.error(`key_id ${created.id}`);
  console.log(created.key);
  return 0;
}

async function keysRevoke(container: Container, args: string[]): Promise<number> {
  const { positionals } = usage(() => parseArgs({ args, strict: true, allowPositionals: true, options: {} }));
  const keyId = required(positionals[0], 'KEY_ID');
  await container.services.admin.revokeKey(CLI_ACTOR, keyId);
  console.log(`revoked ${keyId}`);
  return 0;
}

async function keysList(container: Container, args: string[]): Promise<number> {
  const { values } = usage(() => parseArgs({ args, strict: true, options: { org: { type: 'string' } } }));
  const listed = await container.services.accounts.listKeys(required(values.org, '--org'));
  const rows = listed.keys.map((k) => [
    k.id,
    `${k.prefix}…`,
    k.name,
    k.createdAt.toISOString(),
    k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active',
  ]);
  const table = [['KEY_ID', 'PREFIX', 'NAME', 'CREATED', 'STATUS'], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  console.error(`organisation ${listed.orgName} (${listed.orgId}), tier ${listed.tier}: ${rows.length} keys`);
  for (const row of table) {
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  }
  return 0;
}

async function creditsShow(container: Container, args: string[]): Promise<number> {
  const { values } = usage(() => parseArgs({ args, strict: true, options: { org: { type: 'string' } } }));
  const result = await container.services.accounts.balance(required(values.org, '--org'));
  console.log(`balance ${result.balanceUsd.toFixed(6)} USD for organisation ${result.orgId}`);
  return 0;
}

async function creditsAdd(container: Container, args: string[]): Promise<number> {
  const { values } = usage(() =>
    parseArgs({ args, strict: true, options: { org: { type: 'string' }, usd: { type: 'string' } } }),
  );
  const org = required(values.org, '--org');
  const usd = Number(required(values.usd, '--usd'));
  if (!Number.isFinite(usd) || usd <= 0) throw new UsageError('--usd must be a positive number');
  const result = await container.services.admin.addCredits(CLI_ACTOR, org, usd);
  console.log(`balance ${result.balance_usd.toFixed(6)} USD for organisation ${result.org_id}`);
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
  const progress = startProgress(path.basename(file), container.config.cli.progressMs);
  const prediction = await container.services.predictions
    .create(
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
      { onProgress: progress.pages },
    )
    .finally(progress.stop);
  console.log(JSON.stringify(toPredictionWire(prediction), null, 2));
  return prediction.status === 'completed' ? 0 : 1;
}

/**
 * A progress line on stderr every `everyMs` (a second by default, PRISM_CLI_PROGRESS_MS) once an extraction has run
 * that long: the time so far, and the pages done when the document reports them. Quick extractions print nothing.
 */
function startProgress(
  name: string,
  everyMs: number,
): { pages: (done: number, total: number) => void; stop: () => void } {
  const started = Date.now();
  let pages = '';
  const timer = setInterval(() => {
    console.error(`prism: extracting ${name}: ${Math.round((Date.now() - started) / 1000)} s${pages}`);
  }, everyMs);
  timer.unref();
  return {
    pages: (done, total) => {
      pages = `, ${done}/${total} pages`;
    },
    stop: () => clearInterval(timer),
  };
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
