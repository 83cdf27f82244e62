/**
 * The OpenAPI 3.1 document of the HTTP API (`GET /openapi.json`), built from API_ROUTES: request bodies, query
 * strings and path parameters are the zod schemas the handlers validate with, converted by zod's own
 * `z.toJSONSchema` (as the input a client sends, before defaults and transforms). Answers are described by their
 * status and the error shapes every route shares (docs/errors.md).
 */
import { z } from 'zod';
import { API_ROUTES, type ApiRoute } from './api-routes';

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), without its `$schema` line. */
function jsonSchema(schema: z.ZodType): Json {
  const converted = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete converted['$schema'];
  return converted;
}

/** `/v1/files/:file_id` → `/v1/files/{file_id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:(\w+)/g, '{$1}');
}

function parameters(route: ApiRoute): Json[] {
  const out: Json[] = [];
  const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const params = route.params ? jsonSchema(route.params) : undefined;
  for (const name of names) {
    const schema = (params?.['properties'] as Record<string, Json> | undefined)?.[name] ?? { type: 'string' };
    out.push({ name, in: 'path', required: true, schema });
  }
  if (route.query) {
    const query = jsonSchema(route.query);
    const required = new Set((query['required'] as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((query['properties'] as Record<string, Json> | undefined) ?? {})) {
      out.push({ name, in: 'query', required: required.has(name), schema });
    }
  }
  return out;
}

function requestBody(route: ApiRoute): Json | undefined {
  if (route.body) return { required: true, content: { 'application/json': { schema: jsonSchema(route.body) } } };
  if (route.rawBody === 'multipart') {
    return {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: {
              file: { type: 'string', contentMediaType: 'application/octet-stream' },
              purpose: { type: 'string' },
            },
          },
        },
      },
    };
  }
  if (route.rawBody === 'binary') {
    return { required: true, content: { 'application/octet-stream': { schema: { type: 'string' } } } };
  }
  return undefined;
}

function responses(route: ApiRoute): Json {
  const success = route.produces
    ? { content: { [route.produces]: { schema: { type: 'string' } } } }
    : { content: { 'application/json': { schema: {} } } };
  const status = route.method === 'post' && /\/(generate|create|submit|execute)$/.test(route.path) ? '201' : '200';
  const error = (description: string): Json => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  return {
    [status]: { description: 'Success', ...success },
    ...(route.auth === 'key' ? { '401': error('Missing or invalid API key') } : {}),
    ...(route.body || route.query || route.params ? { '422': error('The request does not match its schema') } : {}),
    '429': error('Rate limit or quota exceeded (Retry-After says when to come back)'),
    default: error('Any other error (docs/errors.md lists every code)'),
  };
}

export function buildOpenApiDocument(version: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of API_ROUTES) {
    const operation: Json = {
      tags: [route.tag],
      summary: route.summary,
      operationId: `${route.method}${openApiPath(route.path).replace(/[^\w]+(\w?)/g, (_m, c: string) => c.toUpperCase())}`,
      parameters: parameters(route),
      responses: responses(route),
      security: route.auth === 'key' ? [{ bearer: [] }] : [{}, { bearer: [] }],
    };
    const body = requestBody(route);
    if (body) operation['requestBody'] = body;
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Prism',
      version,
      description:
        'Multimodal extraction, agents and chat. `/v1` is the VLM Run–style API, `/v1/compat` (and its alias ' +
        '`/v1/openai`) the OpenAI-compatible gateway. Keys go in `Authorization: Bearer <key>`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          description:
            'Most 4xx: {detail: {error}}; 429 and 5xx: {error}; 422: {detail: [...]}; an unknown key: {detail: "Invalid API Key"}',
          type: 'object',
          properties: {
            detail: {},
            error: {
              type: 'object',
              properties: {
                message: { type: 'string' },
                type: { type: 'string' },
                code: { type: ['string', 'null'] },
                param: { type: ['string', 'null'] },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
}
