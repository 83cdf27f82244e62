/**
 * One declaration per HTTP route, read by everything that needs to know the route: the router mounts the handler
 * with `route(router, declaration, handler)`, the handler validates its input with the declaration's own zod schemas
 * (`io.params()`, `io.query()`, `io.body()`: there is no other schema to reach for), and the OpenAPI document
 * (src/http/openapi/openapi-document.ts) walks the express app, finds each mounted handler's declaration and writes
 * the operation from it: parameters, request body, the typed success answers with their examples, and the errors.
 * Nothing else lists routes, so a route cannot be served without being documented or documented without being served.
 *
 * Input is parsed when the handler asks, not before it runs: some handlers must authenticate (or read an upload)
 * first, and the spec wants a 401 ahead of any 422 about the body.
 */
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import { parseInput } from '../../wire/validation';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One answer a route gives: a JSON body with its schema (and a real example), or a body of another type. */
export interface ResponseDeclaration {
  description: string;
  /** The JSON body's schema; for a non-JSON answer, leave it out and give `contentType`. */
  schema?: z.ZodType;
  /** Defaults to `application/json`. */
  contentType?:
    | 'application/json'
    | 'text/event-stream'
    | 'text/plain'
    | 'text/html'
    | 'text/csv'
    | 'image/svg+xml'
    | 'application/octet-stream'
    | 'application/zip';
  /** A response the server really gave (test/integration/openapi-examples.test.ts checks it against the schema). */
  example?: unknown;
  /**
   * When the request asks to stream, the same status answers server-sent events instead: what they carry. Said in
   * the description, not as a second media type: a generated client would then type every answer as JSON or text.
   */
  alsoStreams?: string;
}

/** Error statuses a route can answer besides those every route shares (401, 422 with input, 500). */
export type ErrorStatus = 400 | 402 | 403 | 404 | 409 | 410 | 413 | 415 | 429 | 502 | 503 | 504;

export interface RouteDeclaration {
  method: Method;
  /** Express syntax, relative to where the router is mounted (`/:file_id`). */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** `key`: needs an API key; `open`: answers anonymous callers (a key that is sent is still checked). */
  auth: 'key' | 'open';
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** A body that is not JSON: a multipart upload (field `file`, plus `fields`) or raw bytes. */
  rawBody?:
    | { kind: 'multipart'; fields?: Record<string, string> }
    | { kind: 'form'; required: readonly string[]; fields: Record<string, string> }
    | { kind: 'binary' };
  /** The success answers by status (a redirect is a success for a page or an OAuth step). */
  responses: Partial<Record<200 | 201 | 202 | 204 | 301 | 302, ResponseDeclaration>>;
  errors?: readonly ErrorStatus[];
  /**
   * Why the route is served but left out of the document (a signed link the server hands out, whose path would
   * make the document's paths ambiguous); unset for every documented route.
   */
  unlisted?: string;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** The declaration's input, parsed when the handler asks for it. */
export interface RouteInput<D extends RouteDeclaration> {
  params(): Out<D['params']>;
  /** `extra` joins the query string (an upload's form fields, read as query values). */
  query(extra?: Record<string, unknown>): Out<D['query']>;
  /** `value` replaces the JSON body (a multipart form's text fields). */
  body(value?: unknown): Out<D['body']>;
}

export type RouteHandler<D extends RouteDeclaration> = (
  req: Request,
  res: Response,
  input: RouteInput<D>,
  next: NextFunction,
) => void | Promise<void>;

/** Keeps a declaration's literal types (its schemas) for `route`'s typing. */
export function declare<const D extends RouteDeclaration>(declaration: D): D {
  return declaration;
}

const DECLARATION = Symbol.for('prism.route-declaration');

/** A mounted handler's declaration, or undefined for a handler mounted without one. */
export function declarationOf(handler: unknown): RouteDeclaration | undefined {
  return (handler as { [DECLARATION]?: RouteDeclaration } | null)?.[DECLARATION];
}

/** Checks a JSON answer against its declaration (installed by tests; nothing is checked in production). */
export type ResponseCheck = (declaration: RouteDeclaration, status: number, body: unknown, req: Request) => void;
let responseCheck: ResponseCheck | null = null;

export function setResponseCheck(check: ResponseCheck | null): void {
  responseCheck = check;
}

/** Mounts `handler` on `router` for the declared method and path, carrying its declaration. */
export function route<D extends RouteDeclaration>(router: Router, declaration: D, handler: RouteHandler<D>): void {
  const input = (req: Request): RouteInput<D> => ({
    params: () => parse(declaration.params, req.params, 'path') as Out<D['params']>,
    query: (extra) => parse(declaration.query, { ...req.query, ...extra }, 'query') as Out<D['query']>,
    body: (value) => parse(declaration.body, value ?? req.body, 'body') as Out<D['body']>,
  });
  const mounted: RequestHandler = async (req, res, next) => {
    if (responseCheck) {
      const check = responseCheck;
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        check(declaration, res.statusCode, body, req);
        return json(body);
      };
    }
    await handler(req, res, input(req), next);
  };
  Object.defineProperty(mounted, DECLARATION, { value: declaration });
  router[declaration.method](declaration.path, mounted);
}

function parse(schema: z.ZodType | undefined, value: unknown, location: 'path' | 'query' | 'body'): unknown {
  if (!schema) throw new Error(`route declares no ${location} schema`);
  return parseInput(schema, value, location);
}
