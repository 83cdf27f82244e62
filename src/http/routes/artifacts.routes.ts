/**
 * Artifact routes: `GET /v1/artifacts` lists metadata for an execution or session, or returns one artifact's
 * bytes by `object_id` or `filename` with its exact `Content-Type` (no charset parameter: clients compare it
 * verbatim); `/v1/artifacts/list` and `/v1/artifacts/{session_id}/{object_id}` are the SDKs' older paths.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { ArtifactRecord } from '../../domain/artifact';
import type { ArtifactsService } from '../../services/artifacts.service';
import { userOf } from '../request-context';
import { artifactsQuerySchema, toArtifactWire } from '../../wire/artifacts.schemas';
import { fieldError } from '../../wire/validation';
import { declare, route, type RouteInput } from '../api/route-declaration';
import { artifactListSchema } from '../api/response-schemas';

function sendBytes(res: Response, artifact: ArtifactRecord, bytes: Buffer): void {
  res.status(200);
  res.setHeader('Content-Type', artifact.mimeType);
  res.setHeader('Content-Length', String(bytes.length));
  res.setHeader('Content-Disposition', `inline; filename="${artifact.filename.replace(/["\\\r\n]/g, '_')}"`);
  res.end(bytes);
}

const tag = 'Agents';
const artifactParamsSchema = z.object({ sessionId: z.string().min(1), objectId: z.string().min(1) });
const listDeclaration = (path: '/' | '/list') =>
  declare({
    method: 'get',
    path,
    tag,
    summary:
      "An execution's or session's artifacts; with object_id, or filename, one artifact's bytes instead" +
      (path === '/list' ? ' (the same as GET /v1/artifacts)' : ''),
    auth: 'key',
    query: artifactsQuerySchema,
    responses: {
      200: {
        description: 'A page of artifacts (or, with object_id or filename, the bytes in their own type)',
        schema: z.looseObject({
          namespace_id: z.string(),
          items: artifactListSchema,
          total: z.number().int(),
          limit: z.number().int(),
          offset: z.number().int(),
        }),
      },
    },
    errors: [404],
  });

export const ARTIFACT_ROUTES = {
  list: listDeclaration('/'),
  listAlias: listDeclaration('/list'),
  bytes: declare({
    method: 'get',
    path: '/:sessionId/:objectId',
    tag,
    summary: "One artifact's bytes",
    auth: 'key',
    params: artifactParamsSchema,
    responses: { 200: { description: 'The bytes, in their own type', contentType: 'application/octet-stream' } },
    errors: [404],
  }),
};

export function artifactsRoutes(artifacts: ArtifactsService): Router {
  const router = Router();

  const list = async (req: Request, res: Response, input: RouteInput<typeof ARTIFACT_ROUTES.list>): Promise<void> => {
    const query = input.query();
    const principal = userOf(req);
    const scope = { executionId: query.execution_id ?? undefined, sessionId: query.session_id ?? undefined };
    if (query.object_id || query.filename) {
      const by = query.object_id ? { objectId: query.object_id } : { filename: query.filename as string, scope };
      if ('filename' in by && !scope.executionId && !scope.sessionId) {
        throw fieldError(
          'query',
          'execution_id',
          'missing',
          'execution_id or session_id is required with filename',
          null,
        );
      }
      const { artifact, bytes } = await artifacts.read(principal, by);
      sendBytes(res, artifact, bytes);
      return;
    }
    if (!scope.executionId && !scope.sessionId) {
      throw fieldError('query', 'execution_id', 'missing', 'execution_id or session_id is required', null);
    }
    const page = await artifacts.list(principal, scope, { offset: query.offset, limit: query.limit });
    res.json({
      namespace_id: scope.executionId ?? scope.sessionId,
      items: page.items.map(toArtifactWire),
      total: page.total,
      limit: query.limit,
      offset: query.offset,
    });
  };

  route(router, ARTIFACT_ROUTES.list, list);
  route(router, ARTIFACT_ROUTES.listAlias, list);
  route(router, ARTIFACT_ROUTES.bytes, async (req, res, input) => {
    const { objectId } = input.params();
    const { artifact, bytes } = await artifacts.read(userOf(req), { objectId });
    sendBytes(res, artifact, bytes);
  });
  return router;
}
