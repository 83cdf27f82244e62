/**
 * Issue 47, item 2: a client generated from the live `/openapi.json` works. `openapi-typescript` (its command
 * line) writes the document's types, test/openapi-client/round.ts (an `openapi-fetch` client, copied beside them) is type-checked
 * strictly against them with the TypeScript compiler, then run against the real app: upload a file, generate
 * (extraction) in batch, poll the prediction, execute an agent, a chat completion on the scripted upstream, and a
 * 404. While it runs, every JSON answer a declared route sends is checked against the schema its declaration gives
 * for that status (src/http/api/route-declaration.ts `setResponseCheck`).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { chatCompletionSchema } from '../../src/http/api/response-schemas';
import { setResponseCheck, type RouteDeclaration } from '../../src/http/api/route-declaration';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const ROOT = path.resolve(__dirname, '../..');
const GENERATOR = path.join(path.dirname(require.resolve('openapi-typescript/package.json')), 'bin/cli.js');

interface RoundResult {
  file: { id: string; status: string; bytes: number };
  prediction: { id: string; status: string; response: unknown };
  execution: { id: string; status: string; response: Record<string, unknown> | null };
  chat: { status: number; model: string; reply: string | null | undefined; body: unknown };
  missing: { status: number; body: unknown };
}

/** Compiles `file` with the project's strict settings; the diagnostics, as text. */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    types: [],
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        ts.flattenDiagnosticMessageText(d.messageText, '\n') + (d.file ? ` (${path.basename(d.file.fileName)})` : ''),
    );
}

describe('a client generated from /openapi.json', () => {
  let lab: UpstreamApp;
  let key: string;
  let dir: string;
  const violations: string[] = [];
  const checked = new Set<string>();

  beforeAll(async () => {
    lab = await startUpstreamApp([{ id: 'lab-chat', upstreamModel: 'qwen-7b', pricing: { prompt: 2, completion: 4 } }]);
    key = await lab.app.createKey('generated-client', 'pro');
    await lab.app.container.services.accounts.addCredits('generated-client', 5);
    // Beside the project's node_modules, so the generated file and the copy resolve `openapi-fetch` as a user's would.
    fs.mkdirSync(path.join(ROOT, '.cache'), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, '.cache', 'openapi-client-'));
    setResponseCheck((declaration: RouteDeclaration, status, body) => {
      const schema = declaration.responses[status as keyof RouteDeclaration['responses']]?.schema;
      if (!schema) return; // an error: written by the error handler, checked against the error shapes elsewhere
      checked.add(`${declaration.method} ${declaration.path} ${status}`);
      const result = schema.safeParse(body);
      if (!result.success) {
        violations.push(`${declaration.method} ${declaration.path} ${status}: ${result.error.message}`);
      }
    });
  });
  afterAll(async () => {
    setResponseCheck(null);
    fs.rmSync(dir, { recursive: true, force: true });
    await lab.close();
  });

  it('generates, type-checks, and makes a round of real calls', async () => {
    // The generator's own command line, as a user runs it, on the document the app serves.
    const res = await fetch(`${lab.app.url}/openapi.json`);
    fs.writeFileSync(path.join(dir, 'openapi.json'), await res.text());
    await promisify(execFile)(process.execPath, [GENERATOR, 'openapi.json', '-o', 'prism-api.d.ts'], { cwd: dir });
    const source = fs.readFileSync(path.join(ROOT, 'test/openapi-client/round.ts'), 'utf8');
    fs.writeFileSync(path.join(dir, 'round.ts'), source);

    expect(typeErrors(path.join(dir, 'round.ts'))).toEqual([]);

    // The same file, its types erased, run as CommonJS.
    const js = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2023, esModuleInterop: true },
    }).outputText;
    fs.writeFileSync(path.join(dir, 'round.js'), js);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled copy is loaded as its user would
    const { round } = require(path.join(dir, 'round.js')) as {
      round: (inputs: { baseUrl: string; key: string; receipt: Uint8Array; chatModel: string }) => Promise<RoundResult>;
    };
    // The agent's planner is the upstream's model: its first answer is the run's answer.
    const answer = { company: 'GREENLEAF MARKET', total: '26.22' };
    lab.upstream.next({ kind: 'reply', content: JSON.stringify(answer) });
    const result = await round({ baseUrl: lab.app.url, key, receipt: renderReceiptImage(), chatModel: 'lab-chat' });

    expect(result.file).toMatchObject({ status: 'processed' });
    expect(result.prediction.status).toBe('completed');
    expect(JSON.stringify(result.prediction.response)).toMatch(/GREENLEAF/i);
    expect(result.execution.status).toBe('completed');
    expect(result.execution.response).toEqual(answer);
    expect(result.chat).toMatchObject({ status: 201, model: 'lab-chat' });
    expect(typeof result.chat.reply).toBe('string');
    // Chat answers are written without express's res.json (the fast lane shares the writer): checked here.
    expect(chatCompletionSchema.safeParse(result.chat.body).error).toBeUndefined();
    expect(result.missing).toMatchObject({
      status: 404,
      body: { detail: { error: { code: 'prediction_not_found' } } },
    });
    expect(violations).toEqual([]);
    expect([...checked]).toEqual(
      expect.arrayContaining(['post / 201', 'post /image/generate 201', 'get /:id 200', 'post /agent/execute 200']),
    );
  }, 240_000);

  it('a file that misuses the generated types does not compile', () => {
    const wrong = [
      "import createClient from 'openapi-fetch';",
      "import type { paths } from './prism-api';",
      "const api = createClient<paths>({ baseUrl: 'http://127.0.0.1' });",
      "export const a = api.GET('/v1/predictions/{id}', { params: { path: { identifier: 'x' } } });",
      'export const b = async (): Promise<number | undefined> =>',
      "  (await api.GET('/v1/agent/executions/{id}', { params: { path: { id: 'x' } } })).data?.status;",
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'wrong.ts'), wrong);
    const errors = typeErrors(path.join(dir, 'wrong.ts'));
    expect(errors.join('\n')).toMatch(/identifier/);
    expect(errors.join('\n')).toMatch(/not assignable to type 'number'/);
  }, 120_000);
});
