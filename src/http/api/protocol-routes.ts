/**
 * The routes that follow protocols of their own, described for the OpenAPI document beside the API's: `/mcp`
 * (MCP's streamable HTTP transport, JSON-RPC 2.0) and its icon, and the OAuth 2.1 endpoints MCP clients sign in with (RFC 8414
 * and RFC 9728 metadata, RFC 7591 registration, the authorization code flow with PKCE, revocation). Their handlers
 * live in src/mcp (most of the OAuth ones in the MCP SDK's router), so their declarations are kept here, with full
 * paths; the document lists them only when the app serves them (the OAuth ones when `PRISM_MCP_OAUTH` is on).
 * The WebSocket decision stream cannot be described by OpenAPI; WEBSOCKET_NOTE says where it is documented.
 */
import { z } from 'zod';
import type { RouteDeclaration } from './route-declaration';

export const WEBSOCKET_NOTE =
  'The decision stream is a WebSocket at `GET /v1/compat/decisions/stream` (and `/v1/openai/decisions/stream`); ' +
  'OpenAPI cannot describe its frames, docs/decisions.md does.';

const jsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});
const jsonRpcAnswer = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).nullable(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.looseObject({ code: z.number(), message: z.string() }).optional(),
});

const protectedResource = z.looseObject({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()).optional(),
  resource_name: z.string().optional(),
});

const authorizationServer = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  registration_endpoint: z.string().optional(),
  revocation_endpoint: z.string().optional(),
  response_types_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()).optional(),
  code_challenge_methods_supported: z.array(z.string()).optional(),
});

const tokens = z.looseObject({
  access_token: z.string(),
  token_type: z.string(),
  expires_in: z.number().optional(),
  refresh_token: z.string().optional(),
  scope: z.string().optional(),
});

const registeredClient = z.looseObject({
  client_id: z.string(),
  redirect_uris: z.array(z.string()),
  client_id_issued_at: z.number().optional(),
  client_secret: z.string().optional(),
});

const tag = 'MCP';
const oauth = 'OAuth (MCP sign-in)';

/** Served when the app mounts `/mcp` (always). */
export const MCP_ROUTE = {
  method: 'post',
  path: '/mcp',
  tag,
  summary: 'MCP over streamable HTTP (stateless; JSON-RPC 2.0: initialize, tools/list, tools/call, resources/*)',
  description:
    'POST only: other methods answer 405. Send `Accept: application/json, text/event-stream`; the answer is JSON ' +
    'or one server-sent event per message. Tools, resources and their limits: docs/mcp.md.',
  auth: 'open',
  body: jsonRpcMessage,
  responses: {
    200: { description: 'The JSON-RPC answer', schema: jsonRpcAnswer },
    202: { description: 'A notification was accepted (no answer)' },
  },
  errors: [400, 413, 429],
} satisfies RouteDeclaration;

/** The server's icon, which 2026-07-28 answers link to (src/mcp/mcp-icon.ts); served beside `/mcp`. */
export const MCP_ICON_ROUTE = {
  method: 'get',
  path: '/mcp/icon.svg',
  tag,
  summary: "Prism's icon, as MCP clients show the server (public: an icon is not a secret)",
  auth: 'open',
  responses: { 200: { description: 'The icon', contentType: 'image/svg+xml' } },
} satisfies RouteDeclaration;

/** Served when MCP OAuth is on (`PRISM_MCP_OAUTH`); `POST /oauth/consent` is mounted exactly then. */
export const OAUTH_ROUTES: RouteDeclaration[] = [
  {
    method: 'get',
    path: '/.well-known/oauth-protected-resource',
    tag: oauth,
    summary: "The MCP endpoint's protected-resource metadata (RFC 9728)",
    auth: 'open',
    responses: { 200: { description: 'Metadata', schema: protectedResource } },
  },
  {
    method: 'get',
    path: '/.well-known/oauth-protected-resource/mcp',
    tag: oauth,
    summary: 'The same metadata at the path-suffixed location (RFC 9728 §3.1)',
    auth: 'open',
    responses: { 200: { description: 'Metadata', schema: protectedResource } },
  },
  {
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    tag: oauth,
    summary: 'Authorization server metadata (RFC 8414)',
    auth: 'open',
    responses: { 200: { description: 'Metadata', schema: authorizationServer } },
  },
  {
    method: 'post',
    path: '/register',
    tag: oauth,
    summary: 'Register an OAuth client (RFC 7591 dynamic registration)',
    auth: 'open',
    body: z.looseObject({ redirect_uris: z.array(z.string()), client_name: z.string().optional() }),
    responses: { 201: { description: 'The registered client', schema: registeredClient } },
    errors: [400, 429],
  },
  {
    method: 'get',
    path: '/authorize',
    tag: oauth,
    summary: 'Start sign-in (authorization code with PKCE): shows the consent page, or redirects with an error',
    auth: 'open',
    query: z.object({
      client_id: z.string(),
      redirect_uri: z.string(),
      response_type: z.literal('code'),
      code_challenge: z.string(),
      code_challenge_method: z.literal('S256'),
      state: z.string().optional(),
      scope: z.string().optional(),
      resource: z.string().optional(),
    }),
    responses: {
      200: { description: 'The consent page', contentType: 'text/html' },
      302: { description: 'Back to the client with an error' },
    },
    errors: [400, 429],
  },
  {
    method: 'post',
    path: '/oauth/consent',
    tag: oauth,
    summary: "The consent page's form: approve with a Prism key, or deny; redirects to the client",
    auth: 'open',
    rawBody: {
      kind: 'form',
      required: ['request'],
      fields: { request: 'The signed authorization request', api_key: 'A Prism key', decision: '`approve` or `deny`' },
    },
    responses: {
      200: { description: 'The consent page again, saying what was wrong', contentType: 'text/html' },
      302: { description: 'To the client, with a code or an error' },
    },
    errors: [400, 429],
  },
  {
    method: 'post',
    path: '/token',
    tag: oauth,
    summary: 'Exchange a code (with its PKCE verifier) or a refresh token for tokens',
    auth: 'open',
    rawBody: {
      kind: 'form',
      required: ['grant_type', 'client_id'],
      fields: {
        grant_type: '`authorization_code` or `refresh_token`',
        client_id: 'The registered client',
        code: 'The authorization code',
        code_verifier: 'The PKCE verifier',
        redirect_uri: 'As sent to /authorize',
        refresh_token: 'For `refresh_token`',
        resource: 'The MCP endpoint (RFC 8707)',
      },
    },
    responses: { 200: { description: 'Tokens', schema: tokens } },
    errors: [400, 429],
  },
  {
    method: 'post',
    path: '/revoke',
    tag: oauth,
    summary: 'Revoke an access or refresh token (RFC 7009)',
    auth: 'open',
    rawBody: {
      kind: 'form',
      required: ['token', 'client_id'],
      fields: { token: 'The token', client_id: 'The client' },
    },
    responses: { 200: { description: 'Revoked (or was not valid)', schema: z.object({}) } },
    errors: [400, 429],
  },
];

/** The protocol routes an app serves, judged from its mounted routes (`/mcp`; `/oauth/consent` with OAuth on). */
export function protocolRoutesServed(mounted: readonly { method: string; path: string }[]): RouteDeclaration[] {
  const served = new Set(mounted.map((r) => `${r.method} ${r.path}`));
  return [
    ...(served.has('post /mcp') ? [MCP_ROUTE] : []),
    ...(served.has('get /mcp/icon.svg') ? [MCP_ICON_ROUTE] : []),
    ...(served.has('post /oauth/consent') ? OAUTH_ROUTES : []),
  ];
}
