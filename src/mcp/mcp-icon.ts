/**
 * Prism's mark (a prism splitting a beam) as the MCP server icon. In the 2025 era it travels once, in the
 * initialize answer, as a data URL (stdio has no web server to point at). The 2026-07-28 era stamps the server's
 * identity on every response, so there it is a link to `/mcp/icon.svg` (served without auth: an icon is public),
 * which keeps each response, and the default `tools/list` within its 16 KB, small. Tools carry titles but no icons
 * of their own: an icon per tool would cost the tool list a kilobyte for nothing a model reads.
 */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 3 29 27H3z" fill="#4f46e5"/>' +
  '<path d="M1 17h9M22 15l9-3M22 17l9 2M22 19l9 6" stroke="#f59e0b" stroke-width="2"/></svg>';

export interface McpIcon {
  src: string;
  mimeType: string;
  sizes: string[];
}

export const ICON_PATH = '/icon.svg';

/** The icon inline, for the 2025 initialize answer and stdio. */
export const INLINE_ICONS: McpIcon[] = [
  {
    src: `data:image/svg+xml;base64,${Buffer.from(ICON_SVG).toString('base64')}`,
    mimeType: 'image/svg+xml',
    sizes: ['any'],
  },
];

/** The icon by link, for the HTTP 2026-07-28 era (`baseUrl` is the server's public base). */
export function linkedIcons(baseUrl: string): McpIcon[] {
  return [{ src: `${baseUrl}/mcp${ICON_PATH}`, mimeType: 'image/svg+xml', sizes: ['any'] }];
}
