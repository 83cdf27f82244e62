/**
 * How tools hand layouts to a model: plain text plus a bounded list of lines with boxes, and the full layout kept as
 * an artifact (`lay_…`) that `fill_json_schema` reads back. Keeping the layout out of the transcript keeps model
 * context and checkpoints small, and gives program mode a stable id to bind.
 */
import { z, type DocumentLayout, type LayoutPage, type ToolContext } from '../../src/agents/sdk';

/** Lines returned inline per call; the layout artifact always has all of them. */
export const MAX_INLINE_LINES = 200;

export const lineOutput = z.object({
  text: z.string(),
  confidence: z.number(),
  box: z.tuple([z.number(), z.number(), z.number(), z.number()]).describe('[x0, y0, x1, y1] in page pixels'),
});

export const pageOutput = z.object({
  index: z.number().int(),
  width: z.number(),
  height: z.number(),
  source: z.enum(['ocr', 'text-layer']),
  status: z.enum(['ok', 'error']),
  error: z.string().nullable(),
  text: z.string(),
  lines: z.array(lineOutput),
});

const round = (n: number): number => Math.round(n * 100) / 100;

export function pageText(page: LayoutPage): string {
  return page.lines.map((l) => l.text).join('\n');
}

/** One page as tools return it; at most `maxLines` lines inline. */
export function toPageOutput(page: LayoutPage, maxLines = MAX_INLINE_LINES): z.infer<typeof pageOutput> {
  return {
    index: page.index,
    width: page.width,
    height: page.height,
    source: page.source,
    status: page.status,
    error: page.error ?? null,
    text: pageText(page),
    lines: page.lines.slice(0, maxLines).map((l) => ({
      text: l.text,
      confidence: round(l.confidence),
      box: [round(l.box.x0), round(l.box.y0), round(l.box.x1), round(l.box.y1)],
    })),
  };
}

/** Stores a layout as a `lay_…` artifact and returns its object id. */
export async function saveLayout(ctx: ToolContext, layout: DocumentLayout, filename: string): Promise<string> {
  const ref = await ctx.artifacts.write({
    kind: 'layout',
    filename,
    mimeType: 'application/json',
    bytes: Buffer.from(JSON.stringify(layout)),
  });
  return ref.objectId;
}

/** A filename stem for artifacts derived from a source reference (never a path of ours). */
export function stemOf(source: string): string {
  if (source.startsWith('data:')) return 'input';
  const last = source.split(/[/?#]/).filter(Boolean).pop() ?? 'input';
  return (
    last
      .replace(/\.[a-z0-9]+$/i, '')
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 60) || 'input'
  );
}

/** The description every tool that takes media uses for its source argument. */
export const SOURCE_DESCRIPTION =
  'Where the bytes are: a file id (a UUID, from upload_file or POST /v1/files), an artifact id from an earlier tool ' +
  '(img_…, doc_…), an http(s) URL, or a data: URL.';
