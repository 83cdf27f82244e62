/**
 * The API reference: /openapi.json is a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator),
 * documents every route express has mounted and nothing else, carries the handlers' own zod schemas, and /docs
 * serves Swagger UI from the package, with no network.
 */
import { createApp } from '../../src/app';
import { mountedRoutes } from '../../src/http/mounted-routes';
import { openApiPath } from '../../src/http/openapi/openapi-document';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

/** Mounted routes that are not the HTTP API: the MCP endpoint and OAuth discovery (their own protocols), the pages. */
// /v1/langgraph follows the LangGraph Platform API (docs/langgraph.md), not this document.
const NOT_API = /^\/(mcp|\.well-known|oauth|docs|playground|v1\/langgraph)(\/|$)/;

describe('OpenAPI reference', () => {
  let app: TestApp;
  let document: {
    openapi: string;
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
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

  it('documents every mounted route, and only mounted ones', () => {
    const mounted = mountedRoutes(createApp(app.container))
      .filter((r) => !NOT_API.test(r.path))
      .map((r) => `${r.method.toUpperCase()} ${openApiPath(r.path)}`)
      .sort();
    const documented = Object.entries(document.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(documented).toEqual(mounted);
    expect(mounted).toEqual(expect.arrayContaining(['POST /v1/compat/chat/completions', 'GET /v1/files/{file_id}']));
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
