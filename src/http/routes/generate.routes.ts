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
import { fieldError, parseInput } from '../../wire/validation';

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

export function generateRoutes(predictions: PredictionsService): Router {
  const router = Router();

  router.post('/image/generate', async (req, res) => {
    const user = userOf(req); // authenticate before validating: a keyless caller gets 401, not a 422 echo
    refuseMisplacedConfig(req.body);
    const body = parseInput(imageGenerateBodySchema, req.body, 'body');
    const prediction = await predictions.create(user, toGenerateCommand('image', body));
    res.status(STATUS.image).json(toPredictionWire(prediction));
  });

  for (const kind of ['document', 'video', 'audio'] as const) {
    router.post(`/${kind}/generate`, async (req, res) => {
      const user = userOf(req);
      refuseMisplacedConfig(req.body);
      const body = parseInput(fileGenerateBodySchema, req.body, 'body');
      if ((body.config?.video_max_frames ?? 0) > MAX_VIDEO_FRAMES) {
        throw new BadRequestError(`video_max_frames is at most ${MAX_VIDEO_FRAMES}.`, null, 'config.video_max_frames');
      }
      const prediction = await predictions.create(user, toGenerateCommand(kind, body));
      res.status(STATUS[kind]).json(toPredictionWire(prediction));
    });
  }

  router.post('/image/schema', async (req, res) => {
    const user = userOf(req);
    const body = parseInput(imageSchemaBodySchema, req.body, 'body');
    const command = toGenerateCommand('image_schema', { ...body, domain: null, config: null, metadata: null });
    const prediction = await predictions.create(user, command);
    res.status(201).json(toPredictionWire(prediction));
  });

  router.post('/document/schema', async (req, res) => {
    const body = parseInput(documentSchemaBodySchema, req.body, 'body');
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
