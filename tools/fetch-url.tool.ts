/**
 * fetch_url: GETs a public web page or file through the SSRF-safe fetcher (private, loopback and link-local
 * addresses are refused). Text comes back inline; media is stored as an artifact other tools can read by id.
 */
import { defineTool, z, type ArtifactKind } from '../src/agents/sdk';

const MAX_TEXT = 50_000;

const KIND_BY_FAMILY: Record<string, ArtifactKind> = {
  'image/': 'image',
  'video/': 'video',
  'audio/': 'audio',
  'application/pdf': 'document',
};

export const fetchUrlTool = defineTool({
  name: 'fetch_url',
  description:
    'Fetch a public http(s) URL. HTML and other text come back as text (HTML tags removed, at most 50,000 ' +
    'characters); images, PDFs, audio and video are stored as an artifact whose artifact_id you can pass to ' +
    'ocr_image, read_document, probe_audio or sample_video_frames. Private and local addresses are refused.',
  inputSchema: z.object({ url: z.url({ protocol: /^https?$/ }).describe('An http(s) URL') }),
  outputSchema: z.object({
    status: z.number().int(),
    final_url: z.string(),
    mime_type: z.string(),
    size_bytes: z.number().int(),
    text: z.string().nullable(),
    truncated: z.boolean(),
    artifact_id: z.string().nullable(),
  }),
  annotations: { title: 'Fetch a URL', readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  async handler({ url }, ctx) {
    const page = await ctx.fetch.fetch(url);
    const base = {
      status: page.status,
      final_url: page.finalUrl,
      mime_type: page.mimeType,
      size_bytes: page.body.length,
    };
    const kind = Object.entries(KIND_BY_FAMILY).find(([prefix]) => page.mimeType.startsWith(prefix))?.[1];
    if (kind) {
      const name = new URL(page.finalUrl).pathname.split('/').pop() || 'download';
      const ref = await ctx.artifacts.write({ kind, filename: name, mimeType: page.mimeType, bytes: page.body });
      return { ...base, text: null, truncated: false, artifact_id: ref.objectId };
    }
    let text = page.body.toString('utf8');
    if (page.mimeType.includes('html')) text = stripHtml(text);
    return { ...base, text: text.slice(0, MAX_TEXT), truncated: text.length > MAX_TEXT, artifact_id: null };
  },
});

function stripHtml(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|li|tr|h[1-6])>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n')
    .trim();
}
