/**
 * render_page: one PDF page as a PNG artifact, for looking at a page or OCR'ing it as an image.
 */
import { defineTool, z } from '../src/agents/sdk';
import { SOURCE_DESCRIPTION, stemOf } from './lib/layout-output';

export const renderPageTool = defineTool({
  name: 'render_page',
  description:
    'Render one page of a PDF (0-based page number) to a PNG image and store it as an artifact. Returns the ' +
    'image_id (img_…), which ocr_image and other image tools accept as their image argument.',
  inputSchema: z.object({
    document: z.string().min(1).describe(SOURCE_DESCRIPTION),
    page: z.number().int().min(0).describe('0-based page number'),
    dpi: z.number().int().min(36).max(300).default(150).describe('Resolution (default 150)'),
  }),
  outputSchema: z.object({
    image_id: z.string(),
    filename: z.string(),
    width: z.number().int(),
    height: z.number().int(),
  }),
  annotations: {
    title: 'Render a PDF page',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async handler({ document, page, dpi }, ctx) {
    const media = await ctx.media.load(document);
    const rendered = await ctx.vision.renderPage(media.bytes, page, dpi);
    const filename = `${stemOf(media.filename ?? document)}-page-${page}.png`;
    const ref = await ctx.artifacts.write({ kind: 'image', filename, mimeType: 'image/png', bytes: rendered.png });
    return { image_id: ref.objectId, filename, width: rendered.width, height: rendered.height };
  },
});
