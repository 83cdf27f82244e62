/**
 * The examples in /openapi.json are real answers: every route declaration's example validates against the schema
 * it illustrates, and the same operation, called on the real app here, answers a body that validates too and has
 * the example's fields. A declaration given an example that no call below exercises fails the test, so an example
 * cannot drift away from what the server says.
 */
import { createApp } from '../../src/app';
import { setResponseCheck, type RouteDeclaration } from '../../src/http/api/route-declaration';
import { mountedRoutes } from '../../src/http/mounted-routes';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

type Status = keyof RouteDeclaration['responses'];

describe('OpenAPI examples', () => {
  let app: TestApp;
  let key: string;
  /** Real JSON answers by declaration and status. */
  const seen = new Map<RouteDeclaration, Map<number, unknown[]>>();

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('examples', 'pro');
    await app.container.services.accounts.addCredits('examples', 5);
    setResponseCheck((declaration, status, body) => {
      const byStatus = seen.get(declaration) ?? new Map<number, unknown[]>();
      seen.set(declaration, byStatus.set(status, [...(byStatus.get(status) ?? []), body]));
    });
  });
  afterAll(async () => {
    setResponseCheck(null);
    await app.close();
  });

  it('every example validates, and the real answer of its operation validates and has its fields', async () => {
    const ok = async (res: Response | Promise<Response>, status: number): Promise<Record<string, unknown>> => {
      const answer = await res;
      const body = (await answer.json()) as Record<string, unknown>;
      expect({ status: answer.status, body }).toMatchObject({ status });
      return body;
    };
    await ok(call(`${app.url}/health`), 200);
    await ok(call(`${app.url}/ready`), 200);
    await ok(call(`${app.url}/v1/health`, { key }), 200);
    await ok(call(`${app.url}/v1/compat/health`), 200);
    await ok(call(`${app.url}/v1/hub/info`), 200);
    await ok(call(`${app.url}/v1/compat/models`), 200);
    const file = await ok(uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' }), 201);
    await ok(call(`${app.url}/v1/files/${String(file.id)}`, { key }), 200);
    const prediction = await ok(
      call(`${app.url}/v1/image/generate`, { key, json: { file_id: file.id, domain: 'document.receipt' } }),
      201,
    );
    await ok(call(`${app.url}/v1/predictions/${String(prediction.id)}`, { key }), 200);
    await ok(
      call(`${app.url}/v1/agent/execute`, {
        key,
        json: {
          inputs: { receipt: { type: 'input_file', file_id: file.id } },
          config: {
            prompt: 'Extract the receipt fields',
            json_schema: { type: 'object', properties: { total: { type: ['string', 'null'] } } },
          },
        },
      }),
      200,
    );

    const examples = mountedRoutes(createApp(app.container)).flatMap(({ method, path, declaration }) =>
      Object.entries(declaration?.responses ?? {}).flatMap(([status, answer]) =>
        declaration && answer?.example !== undefined
          ? [{ route: `${method} ${path} ${status}`, declaration, status: Number(status) as Status, answer }]
          : [],
      ),
    );
    expect(examples.length).toBeGreaterThan(8);
    for (const { route, declaration, status, answer } of examples) {
      const schema = answer.schema!;
      expect({ route, example: schema.safeParse(answer.example).error?.message }).toEqual({
        route,
        example: undefined,
      });
      const real = seen.get(declaration)?.get(status) ?? [];
      expect({ route, called: real.length > 0 }).toEqual({ route, called: true });
      for (const body of real) {
        expect({ route, real: schema.safeParse(body).error?.message }).toEqual({ route, real: undefined });
        expect({ route, fields: Object.keys(body as object).sort() }).toEqual({
          route,
          fields: Object.keys(answer.example as object).sort(),
        });
      }
    }
  }, 240_000);
});
