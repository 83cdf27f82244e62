/**
 * zod output schemas of the MCP tools: the REST bodies, so `structuredContent` is exactly what the API returns and
 * the SDK (server and client) checks it against the advertised schema.
 */
import { z } from 'zod';
import { STATUSES } from '../../domain/prediction';

/** Described, not spelled out: five tools of the default list return a prediction (~300 bytes of context each). */
const usageSchema = z.record(z.string(), z.unknown()).describe('credits_used, elements_processed, … (as REST)');

/** The Prediction body of `/v1/{kind}/generate` and `GET /v1/predictions/{id}`. */
export const predictionOutput = z.object({
  id: z.string(),
  object: z.literal('prediction'),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  status: z.enum(STATUSES),
  model: z.string(),
  domain: z.string().nullable(),
  response: z.unknown().describe('The extracted JSON'),
  usage: usageSchema,
  metadata: z.record(z.string(), z.unknown()),
});

/** The file record of `GET /v1/files/{id}` (ISO timestamps, as the main API writes them). */
export const fileOutput = z.object({
  id: z.string(),
  object: z.literal('file'),
  filename: z.string(),
  bytes: z.number(),
  purpose: z.string(),
  created_at: z.union([z.string(), z.number()]),
  status: z.enum(['processed', 'pending']),
  md5: z.string().nullable(),
  content_type: z.string(),
  public_url: z.string().nullable(),
});
