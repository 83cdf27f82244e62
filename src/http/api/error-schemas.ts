/**
 * The error bodies of the spec (docs/errors.md) as zod schemas, for the OpenAPI document's shared components and
 * for tests that check a real error against them. The shapes are written by src/wire/error-body.ts; these describe
 * them: `{detail:{error}}` (most 4xx, 503), top-level `{error}` (429, 5xx), `{detail:"Invalid API Key"}` and
 * `{detail:[issues]}` (422). On the gateway surfaces every body also carries a top-level `error`.
 */
import { z } from 'zod';

export const errorObjectSchema = z.looseObject({
  message: z.string(),
  type: z.string(),
  code: z.string().nullable(),
  param: z.string().nullable(),
  request_id: z.string(),
});

export const validationIssueSchema = z.looseObject({
  type: z.string(),
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  input: z.unknown().optional(),
  ctx: z.record(z.string(), z.unknown()).optional(),
});

/** Shapes on the main API, by name (the names are the document's component names). */
export const mainErrorSchemas = {
  WrappedError: z.looseObject({ detail: z.object({ error: errorObjectSchema }) }),
  TopLevelError: z.looseObject({ error: errorObjectSchema }),
  InvalidApiKey: z.looseObject({ detail: z.literal('Invalid API Key') }),
  ValidationError: z.looseObject({ detail: z.array(validationIssueSchema) }),
};

/** The same shapes on the gateway, each with the top-level `error` object OpenAI clients read. */
export const gatewayErrorSchemas = {
  GatewayWrappedError: z.looseObject({ detail: z.object({ error: errorObjectSchema }), error: errorObjectSchema }),
  GatewayInvalidApiKey: z.looseObject({ detail: z.literal('Invalid API Key'), error: errorObjectSchema }),
  GatewayValidationError: z.looseObject({ detail: z.array(validationIssueSchema), error: errorObjectSchema }),
};

export type ErrorComponent = keyof typeof mainErrorSchemas | keyof typeof gatewayErrorSchemas;

/** Which shapes a status can take on a surface (an error's shape follows its status: src/wire/error-body.ts). */
export function errorComponentsFor(status: number, surface: 'main' | 'gateway'): ErrorComponent[] {
  const gateway = surface === 'gateway';
  if (status === 422) return [gateway ? 'GatewayValidationError' : 'ValidationError'];
  if (status === 401) {
    return gateway ? ['GatewayWrappedError', 'GatewayInvalidApiKey'] : ['WrappedError', 'InvalidApiKey'];
  }
  if (status === 429 || (status >= 500 && status !== 503)) return ['TopLevelError'];
  return [gateway ? 'GatewayWrappedError' : 'WrappedError'];
}

export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request cannot be served as sent (docs/errors.md lists the codes)',
  401: 'No API key where one is needed, or a key that matches no active key',
  402: 'Not enough credit, or a key or organisation budget is spent',
  403: "The key's role, tier or model allow-list does not allow this",
  404: 'Not found in the caller’s organisation',
  409: 'Conflicts with the current state',
  410: 'Gone',
  413: 'The body, upload or work budget is too large',
  415: 'A body in an encoding the server cannot read',
  422: 'The request does not match its schema',
  429: 'Rate limit or quota exceeded (Retry-After says when to come back)',
  500: 'An unexpected error (the body carries the request id)',
  502: 'The upstream model failed',
  503: 'A dependency is down (Retry-After says when to retry)',
  504: 'The upstream model did not answer in time',
};
