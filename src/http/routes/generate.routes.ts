/**
 * Generate routes (structured extraction): `/v1/{image,document,video,audio}/generate`, and `/v1/image/schema`
 * and `/v1/document/schema`, which propose a schema for their input. Parse the body, one service call, render the
 * Prediction. Image and document answer 201, video and audio 200, as the spec's table says; the schema routes 201.
 */
import { Router } from 'express';
import type { PredictionKind } from '../../domain/prediction';
import { BadRequestError } from '../../domain/errors';
import type { PredictionsService } from '../../services/predictions/predictions.types';
import { userOf } from '../request-context';
import {
  documentSchemaBodySchema,
  fileGenerateBodySchema,
  imageGenerateBodySchema,
  imageSchemaBodySchema,
  MAX_VIDEO_FRAMES,
  misplacedConfigField,
  toGenerateCommand,
  toPredictionWire,
} from '../../wire/predictions.schemas';
import { fieldError } from '../../wire/validation';
import { PREDICTION_EXAMPLE } from '../api/examples';
import { declare, route } from '../api/route-declaration';
import { predictionSchema } from '../api/response-schemas';

const STATUS: Record<Exclude<PredictionKind, 'image_schema'>, number> = {
  image: 201,
  document: 201,
  video: 200,
  audio: 200,
};

/** A generation setting at the top level is refused (422 naming `config.<field>`) rather than ignored. */
function refuseMisplacedConfig(body: unknown): void {
  const field = misplacedConfigField(body);
  if (field === null) return;
  const input = (body as Record<string, unknown>)[field];
  throw fieldError(
    'body',
    field,
    'extra_forbidden',
    `'${field}' is a generation setting: send it as config.${field}`,
    input,
  );
}

const tag = 'Extraction';
const GENERATE_ERRORS = [400, 402, 403, 404, 413, 502, 504] as const;
const answer = (status: number) => ({
  description:
    status === 201
      ? 'The prediction (completed, or `pending` with `batch: true`: poll GET /v1/predictions/{id})'
      : 'The prediction (poll GET /v1/predictions/{id} while it is pending)',
  schema: predictionSchema,
});

export const GENERATE_ROUTES = {
  image: declare({
    method: 'post',
    path: '/image/generate',
    tag,
    summary: 'Extract from images (base64, data URLs or URLs)',
    auth: 'key',
    body: imageGenerateBodySchema,
    responses: { 201: { ...answer(201), example: PREDICTION_EXAMPLE } },
    errors: GENERATE_ERRORS,
  }),
  document: declare({
    method: 'post',
    path: '/document/generate',
    tag,
    summary: 'Extract from a document (an uploaded file_id or a url)',
    auth: 'key',
    body: fileGenerateBodySchema,
    responses: { 201: answer(201) },
    errors: GENERATE_ERRORS,
  }),
  video: declare({
    method: 'post',
    path: '/video/generate',
    tag,
    summary: 'Extract from a video (an uploaded file_id or a url)',
    auth: 'key',
    body: fileGenerateBodySchema,
    responses: { 200: answer(200) },
    errors: GENERATE_ERRORS,
  }),
  audio: declare({
    method: 'post',
    path: '/audio/generate',
    tag,
    summary: 'Extract from audio (an uploaded file_id or a url)',
    auth: 'key',
    body: fileGenerateBodySchema,
    responses: { 200: answer(200) },
    errors: GENERATE_ERRORS,
  }),
  imageSchema: declare({
    method: 'post',
    path: '/image/schema',
    tag,
    summary: 'Propose a JSON schema for images',
    auth: 'key',
    body: imageSchemaBodySchema,
    responses: { 201: { description: 'A prediction whose response is the proposed schema', schema: predictionSchema } },
    errors: GENERATE_ERRORS,
  }),
  documentSchema: declare({
    method: 'post',
    path: '/document/schema',
    tag,
    summary: 'Propose a JSON schema for a document',
    auth: 'key',
    body: documentSchemaBodySchema,
    responses: { 201: { description: 'A prediction whose response is the proposed schema', schema: predictionSchema } },
    errors: GENERATE_ERRORS,
  }),
};

export function generateRoutes(predictions: PredictionsService): Router {
  const router = Router();

  route(router, GENERATE_ROUTES.image, async (req, res, input) => {
    const user = userOf(req); // authenticate before validating: a keyless caller gets 401, not a 422 echo
    refuseMisplacedConfig(req.body);
    const body = input.body();
    const prediction = await predictions.create(user, toGenerateCommand('image', body));
    res.status(STATUS.image).json(toPredictionWire(prediction));
  });

  for (const kind of ['document', 'video', 'audio'] as const) {
    route(router, GENERATE_ROUTES[kind], async (req, res, input) => {
      const user = userOf(req);
      refuseMisplacedConfig(req.body);
      const body = input.body();
      if ((body.config?.video_max_frames ?? 0) > MAX_VIDEO_FRAMES) {
        throw new BadRequestError(`video_max_frames is at most ${MAX_VIDEO_FRAMES}.`, null, 'config.video_max_frames');
      }
      const prediction = await predictions.create(user, toGenerateCommand(kind, body));
      res.status(STATUS[kind]).json(toPredictionWire(prediction));
    });
  }

  route(router, GENERATE_ROUTES.imageSchema, async (req, res, input) => {
    const user = userOf(req);
    const body = input.body();
    const command = toGenerateCommand('image_schema', { ...body, domain: null, config: null, metadata: null });
    const prediction = await predictions.create(user, command);
    res.status(201).json(toPredictionWire(prediction));
  });

  route(router, GENERATE_ROUTES.documentSchema, async (req, res, input) => {
    const body = input.body();
    // Answered at once, like /v1/image/schema, unless the caller asks for batch.
    const base = toGenerateCommand('document', {
      ...body,
      batch: body.batch ?? false,
      domain: null,
      config: null,
      metadata: null,
    });
    const command = { ...base, request: { ...base.request, proposeSchema: true } };
    const prediction = await predictions.create(userOf(req), command);
    res.status(201).json(toPredictionWire(prediction));
  });

  return router;
}
