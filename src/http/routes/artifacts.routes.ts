/**
 * Artifact routes: `GET /v1/artifacts` lists metadata for an execution or session, or returns one artifact's
 * bytes by `object_id` or `filename` with its exact `Content-Type` (no charset parameter: clients compare it
 * verbatim); `/v1/artifacts/list` and `/v1/artifacts/{session_id}/{object_id}` are the SDKs' older paths.
 */
import { Router, type Response } from 'express';
import type { ArtifactRecord } from '../../domain/artifact';
import type { ArtifactsService } from '../../services/artifacts.service';
import { userOf } from '../request-context';
import { artifactsQuerySchema, toArtifactWire } from '../../wire/artifacts.schemas';
import { fieldError, parseInput } from '../../wire/validation';

function sendBytes(res: Response, artifact: ArtifactRecord, bytes: Buffer): void {
  res.status(200);
  res.setHeader('Content-Type', artifact.mimeType);
  res.setHeader('Content-Length', String(bytes.length));
  res.setHeader('Content-Disposition', `inline; filename="${artifact.filename.replace(/["\\\r\n]/g, '_')}"`);
  res.end(bytes);
}

export function artifactsRoutes(artifacts: ArtifactsService): Router {
  const router = Router();

  const list = async (req: Parameters<Parameters<Router['get']>[1]>[0], res: Response): Promise<void> => {
    const query = parseInput(artifactsQuerySchema, req.query, 'query');
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

  router.get('/', list);
  router.get('/list', list);
  router.get('/:sessionId/:objectId', async (req, res) => {
    const { artifact, bytes } = await artifacts.read(userOf(req), { objectId: String(req.params.objectId) });
    sendBytes(res, artifact, bytes);
  });
  return router;
}
