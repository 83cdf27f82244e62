/**
 * The API reference: /openapi.json is a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator)
 * that Redocly's recommended rules pass with no warning (run offline, as CI runs it), is built from the routes'
 * own declarations (every route express has mounted has one, and every declared route is documented unless the
 * declaration says why not), types every operation's answers and errors, has no ambiguous path, carries the
 * handlers' own zod schemas and the licence, and /docs serves Swagger UI from the package, with no network.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '../../src/app';
import { protocolRoutesServed } from '../../src/http/api/protocol-routes';
import { mountedRoutes } from '../../src/http/mounted-routes';
import { openApiPath } from '../../src/http/openapi/openapi-document';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

const ROOT = path.resolve(__dirname, '../..');
const REDOCLY = path.join(path.dirname(require.resolve('@redocly/cli/package.json')), 'bin/cli.js');

interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}

describe('OpenAPI reference', () => {
  let app: TestApp;
  let document: {
    openapi: string;
    info: { license?: { name: string; identifier?: string } };
    paths: Record<string, Record<string, Operation>>;
  };

  beforeAll(async () => {
    app = await startTestApp();
    const res = await call(`${app.url}/openapi.json`);
    expect(res.status).toBe(200);
    document = (await res.json()) as typeof document;
  });
  afterAll(() => app.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    // ESM-only: loaded with a real dynamic import (jest runs with --experimental-vm-modules).
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('passes Redocly lint with no warning, offline', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-openapi-'));
    try {
      fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document));
      const args = [REDOCLY, 'lint', 'openapi.json', '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'];
      const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' };
      const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: dir, env });
      const report = JSON.parse(stdout) as { totals: Record<string, number>; problems: { message: string }[] };
      expect(report.problems.map((p) => p.message)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('is built from the routes: every mounted route has a declaration, and every declared one is documented', () => {
    const mounted = mountedRoutes(createApp(app.container));
    const protocol = new Set(protocolRoutesServed(mounted).map((r) => `${r.method} ${r.path}`));
    const undeclared = mounted
      .filter((r) => !r.declaration && !protocol.has(`${r.method} ${r.path}`))
      .map((r) => `${r.method} ${r.path}`);
    expect(undeclared).toEqual([]);
    const expected = [
      ...mounted.filter((r) => r.declaration && !r.declaration.unlisted),
      ...protocolRoutesServed(mounted),
    ]
      .map((r) => `${r.method.toUpperCase()} ${openApiPath(r.path)}`)
      .sort();
    const documented = Object.entries(document.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(documented).toEqual(expected);
    expect(documented).toEqual(
      expect.arrayContaining([
        'POST /v1/compat/chat/completions',
        'GET /v1/files/{file_id}',
        'POST /mcp',
        'POST /token',
        'GET /.well-known/oauth-authorization-server',
        'GET /playground',
        'POST /v1/langgraph/threads/{id}/runs/wait',
        'PUT /v1/langgraph/store/items',
      ]),
    );
    // Left out, each with its reason: the signed links, and the gateway's copies of the VLM Run SDK's file calls.
    const unlisted = mounted.filter((r) => r.declaration?.unlisted).map((r) => `${r.method} ${r.path}`);
    expect(unlisted.sort()).toEqual(
      [
        'put /v1/files/:file_id/upload',
        'get /v1/files/:file_id/content',
        ...['/v1/compat', '/v1/openai'].flatMap((p) => [
          `get ${p}/files/verify-upload/:file_id`,
          `get ${p}/files/hash/:file_hash`,
          `put ${p}/files/:file_id/upload`,
        ]),
      ].sort(),
    );
  });

  it('types every success answer, and every error in the shapes of the spec', () => {
    const untyped: string[] = [];
    for (const [p, ops] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        const success = statuses.filter((s) => /^[23]/.test(s));
        if (success.length === 0) untyped.push(`${method} ${p}: no success answer`);
        for (const s of success) {
          for (const [type, media] of Object.entries(op.responses[s]!.content ?? {})) {
            // A JSON answer names its fields (or is a number, as LangGraph's counts are); other types (bytes,
            // pages, event streams) are strings.
            if (
              type === 'application/json' &&
              !['number', 'integer'].includes(String(media.schema?.['type'])) &&
              !media.schema?.['properties'] &&
              !media.schema?.['items'] &&
              !media.schema?.['additionalProperties']
            ) {
              untyped.push(`${method} ${p} ${s}: untyped JSON`);
            }
          }
        }
        if (!statuses.includes('500')) untyped.push(`${method} ${p}: no 500`);
        for (const s of statuses.filter((x) => /^[45]/.test(x))) {
          const schema = op.responses[s]!.content?.['application/json']?.schema ?? {};
          const refs = JSON.stringify(schema).match(/#\/components\/schemas\/\w+/g) ?? [];
          if (refs.length === 0) untyped.push(`${method} ${p} ${s}: error without a shape`);
        }
      }
    }
    expect(untyped).toEqual([]);
    const prediction = document.paths['/v1/predictions/{id}']!.get!.responses;
    expect(prediction['404']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/WrappedError',
    });
    expect(Object.keys(document.paths['/v1/compat/chat/completions']!.post!.responses)).toEqual(
      expect.arrayContaining(['201', '401', '422', '429', '500']),
    );
  });

  it('names the licence from package.json', () => {
    expect(document.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
  });

  it("carries the handlers' schemas: the image body's inputs and their types, and a body breaking them is refused", async () => {
    const schema = document.paths['/v1/image/generate']?.post?.requestBody?.content['application/json']?.schema as {
      required?: string[];
      properties: Record<string, { anyOf?: { type?: string }[]; type?: string }>;
    };
    // An image comes as `images`, `file_id` or `url`: none of them is required on its own.
    expect(schema.required ?? []).not.toContain('images');
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['images', 'file_id', 'url', 'domain', 'config', 'model']),
    );
    const refused = await call(`${app.url}/v1/image/generate`, {
      key: app.ownerKey,
      json: { domain: 'document.receipt', images: 'not-a-list' },
    });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ detail: [{ loc: ['body', 'images'] }] });
  });

  it('serves Swagger UI at /docs from the package, pointed at /openapi.json', async () => {
    const redirect = await fetch(`${app.url}/docs`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    const page = await call(`${app.url}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    expect((await call(`${app.url}/docs/swagger-ui-bundle.js`)).status).toBe(200);
    expect(await (await call(`${app.url}/docs/swagger-initializer.js`)).text()).toContain("url: '/openapi.json'");
  });
});
