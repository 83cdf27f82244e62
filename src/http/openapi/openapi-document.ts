/**
 * The OpenAPI 3.1 document of the HTTP API (`GET /openapi.json`), built from the express app that serves it: each
 * mounted handler carries its route declaration (src/http/api/route-declaration.ts), so parameters, request bodies,
 * success answers (schemas and real examples) and errors come from the same objects the handlers validate with,
 * converted by zod's own `z.toJSONSchema`. The MCP endpoint and the OAuth endpoints follow protocols of their own;
 * they are described by src/http/api/protocol-routes.ts, and only when the app mounts them.
 */
import type { Express } from 'express';
import { z } from 'zod';
import {
  ERROR_DESCRIPTIONS,
  errorComponentsFor,
  gatewayErrorSchemas,
  mainErrorSchemas,
  type ErrorComponent,
} from '../api/error-schemas';
import { protocolRoutesServed, WEBSOCKET_NOTE } from '../api/protocol-routes';
import type { RouteDeclaration } from '../api/route-declaration';
import { mountedRoutes } from '../mounted-routes';

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), without its `$schema` line. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const converted = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  delete converted['$schema'];
  return converted;
}

/** `/v1/files/:file_id` → `/v1/files/{file_id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:(\w+)/g, '{$1}');
}

const GATEWAY = /^\/v1\/(compat|openai)(\/|$)/;

/** What each group of operations is, for the document's tag list (an alias group repeats its group's line). */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Operations: 'For operators and load balancers: liveness, readiness, metrics (docs/operations.md)',
  Pages: 'Pages a person opens: this document, Swagger UI, the playground',
  Health: 'Health, and a check of the key sent',
  Gateway: 'The OpenAI-compatible gateway (docs/gateway.md): models, chat, embeddings, transcriptions, decisions',
  Hub: 'The domain catalogue: domains and their JSON schemas',
  Skills: 'Skills: packaged prompts and schemas agents and extraction run (docs/skills.md)',
  Files: 'Uploads, for extraction and agents',
  Extraction: 'Structured extraction from images, documents, video and audio (docs/extraction.md)',
  Agents: 'Agents, their executions and run events, and the MCP servers they call (docs/agents.md)',
  Chat: 'Chat threads kept for agent-model chats (docs/chat.md)',
  Feedback: 'Feedback on predictions, executions and chats',
  Evaluations: 'Evaluations of skills and agents against feedback (docs/evaluations.md)',
  Admin: "The operator's API: organisations, keys, budgets, spend, audit (docs/admin.md)",
  MCP: 'The MCP endpoint (docs/mcp.md)',
  LangGraph: 'The LangGraph Platform API for `@langchain/langgraph-sdk` clients (docs/langgraph.md)',
  'OAuth (MCP sign-in)': 'OAuth 2.1 for MCP clients signing in (docs/mcp.md)',
};

function tagOf(name: string): Json {
  const group = name.replace(/ \(\/v1\/openai alias\)$/, '');
  const description = TAG_DESCRIPTIONS[group] ?? group;
  return { name, description: group === name ? description : `${description}; the same under /v1/openai` };
}

function parameters(path: string, route: RouteDeclaration): Json[] {
  const out: Json[] = [];
  const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
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

function requestBody(route: RouteDeclaration): Json | undefined {
  if (route.rawBody?.kind === 'multipart') {
    // A form: the file, and its text fields (the body schema's, or the declared ones).
    const form = route.body ? jsonSchema(route.body) : {};
    const described = Object.fromEntries(
      Object.entries(route.rawBody.fields ?? {}).map(([name, description]) => [name, { type: 'string', description }]),
    );
    const fields = (form['properties'] as Record<string, Json> | undefined) ?? described;
    const required = ['file', ...((form['required'] as string[] | undefined) ?? [])];
    return {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required,
            properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' }, ...fields },
          },
        },
      },
    };
  }
  if (route.body) return { required: true, content: { 'application/json': { schema: jsonSchema(route.body) } } };
  if (route.rawBody?.kind === 'form') {
    const properties = Object.fromEntries(
      Object.entries(route.rawBody.fields).map(([name, description]) => [name, { type: 'string', description }]),
    );
    const schema = { type: 'object', required: [...route.rawBody.required], properties };
    return { required: true, content: { 'application/x-www-form-urlencoded': { schema } } };
  }
  if (route.rawBody?.kind === 'binary') {
    return {
      required: true,
      content: {
        'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
      },
    };
  }
  return undefined;
}

function errorResponse(status: number, surface: 'main' | 'gateway'): Json {
  const refs = errorComponentsFor(status, surface).map((name) => ({ $ref: `#/components/schemas/${name}` }));
  return {
    description: ERROR_DESCRIPTIONS[status] ?? 'Error',
    content: { 'application/json': { schema: refs.length === 1 ? refs[0] : { oneOf: refs } } },
  };
}

function responses(path: string, route: RouteDeclaration): Json {
  const out: Json = {};
  for (const [status, answer] of Object.entries(route.responses)) {
    if (!answer) continue;
    const type = answer.contentType ?? 'application/json';
    // A redirect, or an answer with no body.
    if (status.startsWith('3') || (!answer.schema && !answer.contentType)) {
      out[status] = { description: answer.description };
      continue;
    }
    const schema = answer.schema ? jsonSchema(answer.schema, 'output') : { type: 'string' };
    const media: Json = { schema };
    if (answer.example !== undefined) media['example'] = answer.example;
    const description = answer.alsoStreams
      ? `${answer.description}. ${answer.alsoStreams} (\`text/event-stream\`)`
      : answer.description;
    out[status] = { description, content: { [type]: media } };
  }
  const surface = GATEWAY.test(path) ? 'gateway' : 'main';
  const statuses = new Set<number>([401, 500, ...(route.errors ?? [])]);
  if (route.params || route.query || route.body) statuses.add(422);
  if (surface === 'gateway') statuses.add(429);
  for (const status of [...statuses].sort((a, b) => a - b)) out[String(status)] = errorResponse(status, surface);
  return out;
}

function operationId(method: string, path: string): string {
  return `${method}${openApiPath(path).replace(/[^\w]+(\w?)/g, (_m, c: string) => c.toUpperCase())}`;
}

function operation(method: string, path: string, route: RouteDeclaration): Json {
  const alias = path.startsWith('/v1/openai');
  const op: Json = {
    tags: [alias ? `${route.tag} (/v1/openai alias)` : route.tag],
    summary: route.summary,
    operationId: operationId(method, path),
    parameters: parameters(path, route),
    responses: responses(path, route),
    security: route.auth === 'key' ? [{ bearer: [] }] : [{}, { bearer: [] }],
  };
  if (route.description) op['description'] = route.description;
  const body = requestBody(route);
  if (body) op['requestBody'] = body;
  return op;
}

export function buildOpenApiDocument(app: Express, version: string, licence: string): Json {
  const paths: Record<string, Json> = {};
  const mounted = mountedRoutes(app);
  const declared = [
    ...mounted.flatMap((r) => (r.declaration ? [{ path: r.path, declaration: r.declaration }] : [])),
    ...protocolRoutesServed(mounted).map((r) => ({ path: r.path, declaration: r })),
  ];
  for (const { path, declaration } of declared) {
    if (declaration.unlisted) continue;
    (paths[openApiPath(path)] ??= {})[declaration.method] = operation(declaration.method, path, declaration);
  }
  const schemas: Record<string, Json> = {};
  for (const [name, schema] of Object.entries({ ...mainErrorSchemas, ...gatewayErrorSchemas })) {
    schemas[name as ErrorComponent] = jsonSchema(schema, 'output');
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Prism',
      version,
      license: { name: licence, identifier: licence },
      description:
        'Multimodal extraction, agents and chat. `/v1` is the VLM Run–style API, `/v1/compat` (and its alias ' +
        '`/v1/openai`) the OpenAI-compatible gateway, `/mcp` the MCP endpoint. Keys go in ' +
        "`Authorization: Bearer <key>`. Signed links the server hands out (a presigned upload `url`, a file's " +
        '`public_url`) are used as given, not composed. The LangGraph Platform API is under `/v1/langgraph` ' +
        `(docs/langgraph.md). ${WEBSOCKET_NOTE}`,
    },
    servers: [{ url: '/' }],
    tags: [
      ...new Set(
        Object.values(paths).flatMap((ops) => Object.values(ops).map((op) => (op as { tags: string[] }).tags[0]!)),
      ),
    ]
      .sort()
      .map(tagOf),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas,
    },
  };
}
