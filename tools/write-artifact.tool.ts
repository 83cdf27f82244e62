/**
 * write_artifact: stores text, JSON or CSV the model produced as an artifact of the run, so callers can download
 * it from GET /v1/artifacts.
 */
import { defineTool, invalidToolInput, z } from '../src/agents/sdk';

const TYPES = {
  text: { kind: 'text', mimeType: 'text/plain' },
  json: { kind: 'json', mimeType: 'application/json' },
  csv: { kind: 'csv', mimeType: 'text/csv' },
} as const;

export const writeArtifactTool = defineTool({
  name: 'write_artifact',
  description:
    'Save text, JSON or CSV as a downloadable artifact of this run (for example a table you assembled, or notes). ' +
    'Returns its object_id; callers fetch it from the artifacts endpoint.',
  inputSchema: z.object({
    filename: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^/\\]+$/, 'a file name, not a path'),
    format: z.enum(['text', 'json', 'csv']).describe('text, json or csv'),
    content: z.string().max(5_000_000).describe('The content; for json, a JSON document'),
  }),
  outputSchema: z.object({
    object_id: z.string(),
    filename: z.string(),
    mime_type: z.string(),
    size_bytes: z.number().int(),
  }),
  annotations: {
    title: 'Write an artifact',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  async handler({ filename, format, content }, ctx) {
    if (format === 'json') {
      try {
        JSON.parse(content);
      } catch {
        throw invalidToolInput('write_artifact', 'content is not valid JSON');
      }
    }
    const type = TYPES[format];
    const ref = await ctx.artifacts.write({ ...type, filename, bytes: Buffer.from(content, 'utf8') });
    return { object_id: ref.objectId, filename: ref.filename, mime_type: ref.mimeType, size_bytes: ref.sizeBytes };
  },
});
