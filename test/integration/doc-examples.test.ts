/**
 * Every shell example of the README and docs/ runs here, against a started server, so an example that stops
 * working fails CI (docs/README.md states the convention).
 *
 * - A fence opened with ```sh is run with `bash -eo pipefail`; ```text, ```bash, ```json … are not.
 * - The blocks of one page run in order in one working folder (a copy of docs/examples/), each in its own shell:
 *   a block that needs an id gets it itself, so a reader can paste any block alone.
 * - The environment is the reader's after "Set up": `B` (the server's URL), `H` (the owner key's authorization
 *   header), `PRISM_DATA_DIR` (the server's data folder) and `prism` on the PATH (as `npm link` puts it).
 * - curl reads a `.curlrc` with `--fail-with-body`, so an HTTP error fails the block although the page writes plain
 *   `curl -s`; an example that shows an error on purpose says so with `|| true`.
 * - The models file names `my-llm` and the transcription model `whisper`, served by the scripted OpenAI-compatible
 *   upstream of the tests.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseEnvFor } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const ROOT = path.resolve(__dirname, '..', '..');
const BLOCK_TIMEOUT_MS = 180_000;

interface Example {
  page: string;
  line: number;
  code: string;
}

/** The ```sh blocks of one markdown file, with the line each starts on. */
export function shellBlocks(page: string, text: string): Example[] {
  const blocks: Example[] = [];
  const lines = text.split('\n');
  let open: { fence: string; lang: string; line: number; body: string[] } | null = null;
  lines.forEach((line, index) => {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (open) {
      if (fence && fence[2]!.startsWith(open.fence) && line.trim() === fence[2]) {
        if (open.lang === 'sh') blocks.push({ page, line: open.line, code: open.body.join('\n') });
        open = null;
      } else open.body.push(line);
    } else if (fence) open = { fence: fence[2]!, lang: fence[3] ?? '', line: index + 1, body: [] };
  });
  if (open) throw new Error(`${page}: a code fence opened on line ${(open as { line: number }).line} never closes`);
  return blocks;
}

function markdownPages(): string[] {
  const pages = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) pages.push(rel);
    }
  };
  walk('docs');
  return pages;
}

/**
 * Runs one block in its own process group (the server answers from this process, so never synchronously), and
 * ends the whole group, curl included, when it overruns.
 */
function runBlock(
  code: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-eo', 'pipefail', '-c', code], { cwd, env, detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), BLOCK_TIMEOUT_MS);
    child.on('close', (exit, signal) => {
      clearTimeout(timer);
      resolve({ code: exit ?? `killed by ${signal ?? 'a signal'}`, stdout, stderr });
    });
  });
}

const pages = markdownPages().map((page) => ({
  page,
  examples: shellBlocks(page, fs.readFileSync(path.join(ROOT, page), 'utf8')),
}));

describe('shell examples of the README and docs/', () => {
  let lab: UpstreamApp;
  let home: string;
  let bin: string;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'my-llm',
          upstreamModel: 'my-llm',
          parameters: ['stream', 'stream_options', 'temperature', 'max_tokens'],
        },
        {
          id: 'whisper',
          upstreamModel: 'whisper-small',
          capabilities: null,
          more: { mode: 'transcription', pricing: { per_minute: 0.006 } },
        },
      ],
      { env: { PRISM_ALLOW_PRIVATE_URLS: '1' } },
    );
    lab.upstream.forModel('my-llm', { kind: 'reply', content: 'Hello from the scripted model.' });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-docs-'));
    fs.writeFileSync(path.join(home, '.curlrc'), 'fail-with-body\nshow-error\n');
    // `prism` on the PATH, as `npm link` installs it.
    bin = path.join(home, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(path.join(ROOT, 'bin', 'prism.js'), path.join(bin, 'prism'));
  });
  afterAll(async () => {
    await lab.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('finds examples to run in the README', () => {
    expect(pages.find((p) => p.page === 'README.md')?.examples.length).toBeGreaterThanOrEqual(5);
  });

  describe.each(pages.filter((p) => p.examples.length > 0))('$page', ({ page, examples }) => {
    let cwd: string;
    beforeAll(() => {
      cwd = fs.mkdtempSync(path.join(home, 'work-'));
      fs.cpSync(path.join(ROOT, 'docs', 'examples'), cwd, { recursive: true });
      // docs/examples/ sits in the checkout, so its scripts find the project's packages (decide.mjs imports ws).
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(cwd, 'node_modules'));
    });

    it.each(examples.map((e) => [`line ${e.line}`, e] as const))(
      '%s',
      async (_name, example) => {
        const result = await runBlock(example.code, cwd, {
          PATH: `${bin}:${path.dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
          HOME: home,
          CURL_HOME: home,
          B: lab.app.url,
          H: `Authorization: Bearer ${lab.app.ownerKey}`,
          PRISM_DATA_DIR: lab.app.dataDir,
          // The CLI works on the server's records and blobs, on whichever backends the test apps run.
          ...databaseEnvFor(lab.app.dataDir),
          PRISM_LOG_LEVEL: 'silent',
          PRISM_MODELS_FILE: path.join(lab.dir, 'models.yaml'),
        });
        const report = `${page}:${example.line} exited ${result.code}\n--- stdout\n${result.stdout.slice(-2000)}\n--- stderr\n${result.stderr.slice(-2000)}`;
        // PRISM_DOC_EXAMPLES_SHOW=1 prints every block's output, to read what a page's reader will see.
        if (process.env['PRISM_DOC_EXAMPLES_SHOW'] === '1') process.stdout.write(`${report}\n`);
        expect({ ok: result.code === 0, report }).toEqual({ ok: true, report });
      },
      BLOCK_TIMEOUT_MS + 5_000,
    );
  });
});
