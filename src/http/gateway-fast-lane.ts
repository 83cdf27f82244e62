/**
 * The gateway's hot path: `POST {/v1/compat,/v1/openai}/chat/completions` served on node's request and response
 * directly instead of through express. Profiled under load, express's router, body parser and response helpers
 * were about a sixth of the gateway's CPU per call, for a route that needs none of their generality.
 *
 * The contract is the express route's, through the same functions: request id, JSON body limit and parse errors,
 * gateway auth (client address resolved by express's own `trust proxy` function), the rate limit and its headers,
 * `serveChatCompletion`, and the one error responder. Whatever the lane does not handle the common way — any
 * other path or method, a body that is not plain `application/json` in UTF-8, a compressed body — it leaves
 * untouched for express, which answers exactly as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { RateLimiter } from '../metering/rate-limiter';
import type { AuthService } from '../services/auth.service';
import { jsonBytesTooDeep } from '../lib/json-bounds';
import { bodyReadError, jsonTooDeepError } from './middleware/error-handler';
import { enforceRateLimit } from '../metering/enforce-rate-limit';
import type { ErrorResponder } from '../wire/error-body';
import { resolveRequestId } from '../wire/request-id';
import { prepareSchemas, schemasIn } from '../lib/json-schema';
import { DEFAULT_WORK_LIMITS, requestWorkBudget, runWithWorkBudget, type WorkLimits } from '../lib/work-budget';
import { serveChatCompletion, type CompatRoutesDeps } from './routes/compat.routes';

const CHAT_PATHS = new Set(['/v1/compat/chat/completions', '/v1/openai/chat/completions']);
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

export interface GatewayFastLaneDeps {
  auth: AuthService;
  limiter: RateLimiter;
  compat: Pick<CompatRoutesDeps, 'chat'>;
  respondError: ErrorResponder;
  maxJsonBytes: number;
  /** Deepest nesting a body may have; checked on the raw bytes before parsing. */
  maxJsonDepth: number;
  /** express's compiled `trust proxy` function (`app.get('trust proxy fn')`). */
  trustProxy: (addr: string, index: number) => boolean;
  /** The per-request work budget's limits (src/lib/work-budget.ts); the call runs on one once its body is read. */
  workBudget?: { anonymous: WorkLimits; keyed: WorkLimits };
}

/** Returns a listener that takes the requests it can serve (true) and leaves the rest to the caller (false). */
export function createGatewayFastLane(
  deps: GatewayFastLaneDeps,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST' || !isChatPath(req.url)) return false;
    const type = req.headers['content-type'];
    const encoding = req.headers['content-encoding'];
    if (type === undefined || !PLAIN_JSON.test(type)) return false;
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;

    const requestId = resolveRequestId(req.headers['x-request-id']);
    res.setHeader('x-request-id', requestId);
    Object.assign(req, { routePattern: req.url?.split('?')[0] });
    serve(deps, req, res, requestId).catch((error: unknown) => deps.respondError(res, error, requestId, 'gateway'));
    return true;
  };
}

async function serve(
  deps: GatewayFastLaneDeps,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
): Promise<void> {
  // Authenticate before reading the body: a bad key is a 401 whatever the body holds.
  const clientIp = proxyaddr(req, deps.trustProxy);
  const principal = await deps.auth.authenticate(req.headers.authorization, { clientIp, surface: 'gateway' });
  Object.assign(req, { principal }); // for the request log
  const raw = await readBody(req, deps.maxJsonBytes);
  if (jsonBytesTooDeep(raw, deps.maxJsonDepth)) throw jsonTooDeepError();
  const body = parseJsonBody(raw, deps.maxJsonBytes);
  await enforceRateLimit(deps.limiter, principal, res);
  const fingerprint = req.headers['x-prism-fingerprint'];
  const session = req.headers['x-session-id'];
  const budget = requestWorkBudget(deps.workBudget ?? DEFAULT_WORK_LIMITS, principal.kind === 'user');
  await runWithWorkBudget(budget, async () => {
    // A large response_format schema compiles on a structure worker first (lib/json-schema.ts), off the loop.
    const schemas = schemasIn(body);
    if (schemas.length > 0) await prepareSchemas(schemas);
    return serveChatCompletion(
      deps.compat,
      {
        body,
        principal,
        requestId,
        fingerprint: typeof fingerprint === 'string' ? fingerprint : null,
        sessionHeader: typeof session === 'string' ? session : null,
      },
      res,
    );
  });
}

function isChatPath(url: string | undefined): boolean {
  if (url === undefined) return false;
  const query = url.indexOf('?');
  return CHAT_PATHS.has(query < 0 ? url : url.slice(0, query));
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (declared > limit) return Promise.reject(bodyReadError('entity.too.large', limit));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        req.resume();
        reject(bodyReadError('entity.too.large', limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received));
    };
    const onAborted = (): void => {
      cleanup();
      reject(bodyReadError('request.aborted', limit));
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onAborted);
  });
}

/** JSON as express.json reads it (strict): empty is `{}`, only an object or array at the top. */
function parseJsonBody(raw: Buffer, limit: number): unknown {
  const text = raw.toString('utf8');
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return {};
  if (first === '{' || first === '[') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // the parse error below
    }
  }
  throw bodyReadError('entity.parse.failed', limit);
}
