/**
 * The typed decision endpoint of the gateway (mounted on `/v1/compat` and `/v1/openai`, behind gateway auth and
 * the per-caller budget): `POST /decisions` answers one question set about one image with the same service, so
 * the same answers and usage, as a frame on the WebSocket stream; `GET /decisions` lists what the local decision
 * engine answers without a model.
 */
import { Router } from 'express';
import { z } from 'zod';
import { DECISION_STREAM_PATHS, decisionSettingsSchema } from '../../gateway/decisions/decision-request';
import { LOCAL_DECISION_MODEL, type DecisionsService } from '../../gateway/decisions/decisions.service';
import { randomHex } from '../../lib/random-id';
import { principalOf } from '../request-context';
import { declare, route } from '../api/route-declaration';

export const decisionBodySchema = decisionSettingsSchema
  .extend({
    /** The image: a data URL, bare base64, or an http(s) URL. */
    image: z.string().min(1).optional(),
    /** Or a stored file's id. */
    file_id: z.string().min(1).optional(),
  })
  .strict();

const tag = 'Gateway';

export const DECISION_ROUTES = {
  kinds: declare({
    method: 'get',
    path: '/decisions',
    tag,
    summary: 'The decision kinds the local engine answers without a model, and where the WebSocket stream is',
    auth: 'open',
    responses: {
      200: {
        description: 'The kinds',
        schema: z.looseObject({
          object: z.literal('list'),
          model: z.string(),
          stream: z.string(),
          data: z.array(z.record(z.string(), z.unknown())),
        }),
      },
    },
  }),
  decide: declare({
    method: 'post',
    path: '/decisions',
    tag,
    summary: 'Answer one question set about one image (the same answers as a frame of the WebSocket stream)',
    auth: 'open',
    body: decisionBodySchema,
    responses: {
      200: {
        description: 'The answers',
        schema: z.looseObject({
          id: z.string(),
          object: z.literal('decision'),
          created: z.number().int(),
          model: z.string(),
          upstream_model: z.string().nullable(),
          questions: z.unknown(),
          answers: z.unknown(),
          latency_ms: z.number(),
          usage: z.unknown(),
        }),
      },
    },
    errors: [400, 402, 403, 404, 502, 504],
  }),
};

export interface DecisionsRoutesDeps {
  decisions: DecisionsService;
}

export function decisionsRoutes(deps: DecisionsRoutesDeps): Router {
  const router = Router();

  route(router, DECISION_ROUTES.kinds, (_req, res) => {
    res.json({
      object: 'list',
      model: LOCAL_DECISION_MODEL,
      stream: DECISION_STREAM_PATHS[0],
      data: deps.decisions.kinds(),
    });
  });

  route(router, DECISION_ROUTES.decide, async (req, res, input) => {
    const body = input.body();
    const principal = principalOf(req);
    const { image, file_id: fileId, ...settings } = body;
    const { session, outcome, latencyMs } = await deps.decisions.decideOnce(
      {
        principal,
        fingerprint: req.get('x-prism-fingerprint') ?? null,
      },
      settings,
      { images: image === undefined ? [] : [image], fileId },
    );
    res.json({
      id: `dec_${randomHex(12)}`,
      object: 'decision',
      created: Math.floor(Date.now() / 1000),
      model: session.model,
      upstream_model: session.upstreamModel,
      questions: session.routes,
      answers: outcome.answers,
      latency_ms: latencyMs,
      usage: outcome.usage,
    });
  });

  return router;
}
