/**
 * read_artifact: reads back an artifact of the caller's organisation (text inline; other bytes as metadata only —
 * media artifacts are passed by id to the tools that read them).
 */
import { defineTool, z } from '../src/agents/sdk';

const MAX_TEXT = 100_000;
const TEXTUAL = /^(text\/|application\/(json|xml|csv))/;

export const readArtifactTool = defineTool({
  name: 'read_artifact',
  description:
    'Read an artifact by object_id (txt_…, json_…, csv_…, lay_…, img_…). Text, JSON and CSV come back as text; ' +
    'images, video, audio and PDFs come back as metadata only: pass their id to ocr_image, read_document, ' +
    'sample_video_frames or probe_audio instead. Without object_id, lists the artifacts of this run.',
  inputSchema: z.object({ object_id: z.string().optional() }),
  outputSchema: z.object({
    artifacts: z.array(
      z.object({ object_id: z.string(), filename: z.string(), mime_type: z.string(), size_bytes: z.number().int() }),
    ),
    text: z.string().nullable(),
    truncated: z.boolean(),
  }),
  annotations: { title: 'Read an artifact', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ object_id }, ctx) {
    const wire = (a: { objectId: string; filename: string; mimeType: string; sizeBytes: number }) => ({
      object_id: a.objectId,
      filename: a.filename,
      mime_type: a.mimeType,
      size_bytes: a.sizeBytes,
    });
    if (!object_id) return { artifacts: (await ctx.artifacts.list()).map(wire), text: null, truncated: false };
    const artifact = await ctx.artifacts.read(object_id);
    const textual = TEXTUAL.test(artifact.mimeType);
    const text = textual ? artifact.bytes.toString('utf8') : null;
    return {
      artifacts: [wire(artifact)],
      text: text === null ? null : text.slice(0, MAX_TEXT),
      truncated: text !== null && text.length > MAX_TEXT,
    };
  },
});
