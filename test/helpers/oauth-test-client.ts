/**
 * A test `OAuthClientProvider` for the MCP SDK client: what a desktop client does, with the browser step done by
 * fetch. `redirectToAuthorization` opens the consent page Prism rendered, reads the form (request id, CSRF token)
 * and its cookie, posts the person's answer (an API key, or none in single-user mode) with `redirect: 'manual'`,
 * and keeps the `code` (or `error`) of the redirect back to the client. Nothing listens on the redirect URI.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

export const TEST_REDIRECT = 'http://127.0.0.1:9/callback';

export interface ConsentAnswer {
  action: 'approve' | 'deny';
  apiKey: string;
}

export class TestOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** The redirect back to the client after the consent page, as a URL. */
  landed: URL | null = null;
  /** Every consent page served (HTML), in order. */
  pages: string[] = [];
  /** Authorization URLs the SDK asked the "browser" to open. */
  opened: URL[] = [];

  constructor(private readonly answer: ConsentAnswer) {}

  get redirectUrl(): string {
    return TEST_REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Prism OAuth test client',
      redirect_uris: [TEST_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.opened.push(url);
    this.landed = await answerConsent(url, this.answer, (html) => this.pages.push(html));
  }

  /** The code of the last redirect back; throws when the consent step did not produce one. */
  get code(): string {
    const code = this.landed?.searchParams.get('code');
    if (!code) throw new Error(`no code in ${this.landed?.href ?? '(no redirect)'}`);
    return code;
  }
}

/** Opens the consent page at `url` and posts `answer`; returns where the browser is sent next. */
export async function answerConsent(
  url: URL,
  answer: ConsentAnswer,
  onPage: (html: string) => void = () => undefined,
): Promise<URL> {
  const page = await fetch(url, { redirect: 'manual' });
  if (page.status === 302) return new URL(page.headers.get('location') ?? '');
  const html = await page.text();
  onPage(html);
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${html}`);
  const field = (name: string): string => {
    const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
    if (!match?.[1]) throw new Error(`consent page has no ${name}`);
    return match[1];
  };
  const cookie = (page.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  const posted = await fetch(new URL('/oauth/consent', url), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({
      request_id: field('request_id'),
      csrf: field('csrf'),
      api_key: answer.apiKey,
      action: answer.action,
    }),
  });
  if (posted.status !== 302) {
    const text = await posted.text();
    onPage(text);
    throw new Error(`consent answered ${posted.status}: ${text}`);
  }
  return new URL(posted.headers.get('location') ?? '');
}
