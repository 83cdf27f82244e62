/**
 * ocr_image: reads the printed text of one image with the embedded OCR engine, line by line with boxes.
 */
import { defineTool, z } from '../src/agents/sdk';
import { SOURCE_DESCRIPTION, pageOutput, saveLayout, stemOf, toPageOutput } from './lib/layout-output';

export const ocrImageTool = defineTool({
  name: 'ocr_image',
  description:
    'Read the text printed in an image (photo, scan, screenshot, receipt) with OCR. Returns the text, each line ' +
    'with its bounding box and confidence, and a layout_id to pass to fill_json_schema. Use it for images; for PDFs ' +
    'use read_document.',
  inputSchema: z.object({ image: z.string().min(1).describe(SOURCE_DESCRIPTION) }),
  outputSchema: z.object({
    layout_id: z.string().describe('Artifact id of the full layout; pass it to fill_json_schema'),
    page: pageOutput,
    line_count: z.number().int(),
  }),
  annotations: { title: 'OCR an image', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ image }, ctx) {
    const media = await ctx.media.load(image);
    const page = await ctx.vision.ocrImage(media.bytes);
    const layoutId = await saveLayout(ctx, { pages: [page] }, `ocr-${stemOf(media.filename ?? image)}.json`);
    return { layout_id: layoutId, page: toPageOutput(page), line_count: page.lines.length };
  },
});
