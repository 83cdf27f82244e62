/**
 * sample_video_frames: frames of a video at a steady rate (plus scene cuts), each stored as an image artifact and,
 * by default, OCR'd, so on-screen text can be read and filled into a schema.
 */
import { defineTool, z, type LayoutPage } from '../src/agents/sdk';
import { SOURCE_DESCRIPTION, pageText, saveLayout, stemOf } from './lib/layout-output';

export const sampleVideoFramesTool = defineTool({
  name: 'sample_video_frames',
  description:
    'Sample frames from a video (default 1 per second, at most max_frames spread over the whole clip), store each ' +
    'as an image artifact and OCR the text shown on screen. Returns per-frame time, image_id and text, scene-change ' +
    'times, whether there is an audio track, and a layout_id of the on-screen text for fill_json_schema.',
  inputSchema: z.object({
    video: z.string().min(1).describe(SOURCE_DESCRIPTION),
    fps: z.number().positive().max(30).optional().describe('Frames per second to sample (default 1)'),
    max_frames: z.number().int().min(1).max(64).default(16).describe('Most frames to return (default 16)'),
    ocr: z.boolean().default(true).describe('Read the on-screen text of each frame (default true)'),
  }),
  outputSchema: z.object({
    duration_s: z.number().nullable(),
    has_audio: z.boolean(),
    scene_changes_s: z.array(z.number()),
    frames: z.array(
      z.object({ index: z.number().int(), time_s: z.number(), image_id: z.string(), text: z.string().nullable() }),
    ),
    layout_id: z.string().nullable(),
  }),
  annotations: {
    title: 'Sample video frames',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async handler({ video, fps, max_frames, ocr }, ctx) {
    const media = await ctx.media.load(video);
    const sampled = await ctx.vision.sampleFrames(media.bytes, { fps: fps ?? null, maxFrames: max_frames });
    const stem = stemOf(media.filename ?? video);
    const frames = [];
    const pages: LayoutPage[] = [];
    for (const frame of sampled.frames) {
      const ref = await ctx.artifacts.write({
        kind: 'image',
        filename: `${stem}-frame-${frame.index}.png`,
        mimeType: 'image/png',
        bytes: frame.png,
      });
      let text: string | null = null;
      if (ocr) {
        const page = await ctx.vision.ocrImage(frame.png);
        pages.push({ ...page, index: frame.index, timeS: frame.timeS });
        text = pageText(page);
      }
      frames.push({ index: frame.index, time_s: frame.timeS, image_id: ref.objectId, text });
      ctx.progress?.({ progress: frames.length, total: sampled.frames.length, message: 'frames sampled' });
    }
    const layoutId = ocr ? await saveLayout(ctx, { pages }, `${stem}-frames.json`) : null;
    return {
      duration_s: sampled.durationS,
      has_audio: sampled.hasAudio,
      scene_changes_s: sampled.sceneChangesS,
      frames,
      layout_id: layoutId,
    };
  },
});
