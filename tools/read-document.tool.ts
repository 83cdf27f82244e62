/**
 * read_document: the pages of a PDF as text with line boxes (text layer where present, OCR for scanned pages).
 */
import { defineTool, z } from '../src/agents/sdk';
import { SOURCE_DESCRIPTION, pageOutput, saveLayout, stemOf, toPageOutput } from './lib/layout-output';

/** Lines per page returned inline when several pages come back (the layout artifact keeps every line). */
const LINES_PER_PAGE = 120;

export const readDocumentTool = defineTool({
  name: 'read_document',
  description:
    'Read a PDF document: for each page its text, lines with bounding boxes and whether the text came from the ' +
    'text layer or OCR of a scanned page. Optionally only some pages (0-based). Returns a layout_id to pass to ' +
    'fill_json_schema. Use render_page when you need to see a page as an image.',
  inputSchema: z.object({
    document: z.string().min(1).describe(SOURCE_DESCRIPTION),
    pages: z.array(z.number().int().min(0)).max(1000).optional().describe('0-based page numbers; default: all'),
    dpi: z.number().int().min(72).max(300).optional().describe('Resolution for OCR of scanned pages (default 150)'),
  }),
  outputSchema: z.object({
    layout_id: z.string(),
    page_count: z.number().int(),
    pages: z.array(pageOutput),
    failed_pages: z.array(z.number().int()),
  }),
  annotations: { title: 'Read a document', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ document, pages, dpi }, ctx) {
    const media = await ctx.media.load(document);
    const read = await ctx.vision.readDocument(media.bytes, { pageIndices: pages ?? null, dpi: dpi ?? null });
    ctx.progress?.({ progress: read.pages.length, total: read.pages.length, message: 'pages read' });
    const layoutId = await saveLayout(
      ctx,
      { pages: read.pages },
      `document-${stemOf(media.filename ?? document)}.json`,
    );
    return {
      layout_id: layoutId,
      page_count: read.pageCount,
      pages: read.pages.map((p) => toPageOutput(p, LINES_PER_PAGE)),
      failed_pages: read.pages.filter((p) => p.status === 'error').map((p) => p.index),
    };
  },
});
