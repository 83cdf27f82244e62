/**
 * fill_json_schema: fills a JSON schema from layouts read by other tools (or from plain text) with the embedded
 * schema-guided extractor. A field it cannot find is null — never guessed.
 */
import {
  defineTool,
  invalidToolInput,
  schemaProblem,
  z,
  type DocumentLayout,
  type LayoutPage,
} from '../src/agents/sdk';
import { textLayout } from './lib/text-layout';

export const fillJsonSchemaTool = defineTool({
  name: 'fill_json_schema',
  description:
    'Fill a JSON schema with values found in documents or text: pass layout_ids returned by ocr_image, ' +
    'read_document or sample_video_frames, and/or plain text. Uses labels, value patterns and positions; fields ' +
    'that cannot be found are null (never guessed). Returns data (the filled object), per-field confidence and the ' +
    'list of fields left empty.',
  inputSchema: z.object({
    json_schema: z.record(z.string(), z.unknown()).describe('The JSON schema (type: object) to fill'),
    layout_ids: z.array(z.string()).max(50).optional().describe('Layouts (lay_…) from reading tools'),
    text: z.string().max(200_000).optional().describe('Plain text to read values from'),
    domain: z.string().optional().describe('Hub domain hint such as document.invoice'),
    instructions: z.string().max(4000).optional().describe('What the fields mean, if the schema does not say'),
  }),
  outputSchema: z.object({
    data: z.record(z.string(), z.unknown()),
    confidence: z.record(z.string(), z.number()),
    missing_fields: z.array(z.string()),
  }),
  annotations: { title: 'Fill a JSON schema', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ json_schema, layout_ids, text, domain, instructions }, ctx) {
    // A planner's schema is bounded like a caller's: no recursive or exploding schema reaches the extractor.
    const problem = schemaProblem(json_schema);
    if (problem) throw invalidToolInput('fill_json_schema', `json_schema is not a usable JSON schema: ${problem}`);
    const pages: LayoutPage[] = [];
    for (const id of layout_ids ?? []) {
      const artifact = await ctx.artifacts.read(id);
      const layout = JSON.parse(artifact.bytes.toString('utf8')) as DocumentLayout;
      for (const page of layout.pages) pages.push({ ...page, index: pages.length });
    }
    if (text && text.trim()) for (const page of textLayout(text).pages) pages.push({ ...page, index: pages.length });
    const hints = { ...(domain ? { domain } : {}), ...(instructions ? { prompt: instructions } : {}) };
    const filled = ctx.vision.fillSchema({ pages }, json_schema, hints);
    return { data: filled.data, confidence: filled.confidence, missing_fields: missingFields(filled.data) };
  },
});

/** Dotted paths of top-level and nested object fields that came back null. */
function missingFields(data: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value === null) out.push(path);
    else if (typeof value === 'object' && !Array.isArray(value)) {
      out.push(...missingFields(value as Record<string, unknown>, path));
    }
  }
  return out;
}
