/**
 * The consent page of Prism's MCP authorization server: what a person sees when a client (Claude, Cursor, the
 * Inspector, mcp-remote) asks to use Prism for them. It names the client, where the answer goes (the redirect
 * host), what is granted, and asks for an API key (in single-user mode the owner may approve without one).
 * Plain HTML with no script; the form posts to `/oauth/consent` with the request id and a CSRF token that must
 * match the cookie set with the page. The page cannot be framed (clickjacking).
 */
import type { Response } from 'express';

export const CONSENT_PATH = '/oauth/consent';

export interface ConsentView {
  requestId: string;
  csrf: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  resource: string;
  singleUser: boolean;
  /** Shown above the form after a refused sign-in. */
  error?: string;
  /** Shown above the form when the client's own configuration is at fault (a refused key it keeps sending). */
  notice?: string;
}

const escape = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** The cookie holding the CSRF token of one consent request (one per request, so two open tabs both work). */
export function csrfCookieName(requestIdHash: string, secure: boolean): string {
  return `${secure ? '__Host-' : ''}prism_csrf_${requestIdHash.slice(0, 16)}`;
}

/** Headers every page of the consent flow carries. */
export function setPageHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}' +
  'h1{font-size:1.4rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}' +
  'dd{margin:0;word-break:break-all}.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.5rem .75rem}' +
  'label{display:block;margin:1rem 0 .25rem;font-weight:600}input[type=password]{width:100%;padding:.4rem}' +
  'button{margin:1rem .5rem 0 0;padding:.5rem 1.2rem;font-size:1rem}';

export function renderConsentPage(view: ConsentView): string {
  const host = new URL(view.redirectUri).host;
  const keyHint = view.singleUser
    ? 'This Prism runs in single-user mode: leave the key empty to approve as its owner.'
    : 'Sign in with one of your Prism API keys; the client then acts as that key’s user.';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Connect ${escape(view.clientName)} to Prism</title><style>${STYLE}</style></head>
<body><main>
<h1>Connect <span id="client-name">${escape(view.clientName)}</span> to Prism?</h1>
${view.notice ? `<p class="error" role="alert" id="notice">${escape(view.notice)}</p>` : ''}
${view.error ? `<p class="error" role="alert" id="error">${escape(view.error)}</p>` : ''}
<dl>
<dt>Client</dt><dd>${escape(view.clientName)}</dd>
<dt>Sends you back to</dt><dd id="redirect-host">${escape(host)}</dd>
<dt>Access</dt><dd>${view.scopes.map(escape).join(', ')}: use Prism’s MCP tools as you</dd>
<dt>Resource</dt><dd>${escape(view.resource)}</dd>
</dl>
<form method="post" action="${CONSENT_PATH}">
<input type="hidden" name="request_id" value="${escape(view.requestId)}">
<input type="hidden" name="csrf" value="${escape(view.csrf)}">
<label for="api_key">Prism API key</label>
<input type="password" id="api_key" name="api_key" autocomplete="off" placeholder="prism_…">
<p>${escape(keyHint)} Only approve clients you started yourself.</p>
<button type="submit" name="action" value="approve" id="approve">Approve</button>
<button type="submit" name="action" value="deny" id="deny">Deny</button>
</form>
</main></body></html>`;
}

export function renderMessagePage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escape(title)}</h1><p class="error" role="alert" id="error">${escape(message)}</p></main></body></html>`;
}
