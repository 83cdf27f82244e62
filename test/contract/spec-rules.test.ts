/**
 * Every numbered rule of the spec's chat-completion, error and authentication sections is cited here with the test
 * that shows it, so a rule without a test (or a test renamed away from its rule) fails this suite. Rules the spec
 * leaves without content, or that belong to engines Prism does not have, are listed with the reason.
 */
import fs from 'node:fs';
import path from 'node:path';

interface Citation {
  file: string;
  /** A substring of the `it(...)` title. */
  test: string;
}

type Rule = Citation[] | { notApplicable: string };

const GW = 'test/integration/gateway.test.ts';
const EX = 'test/integration/extraction.test.ts';
const ER = 'test/integration/errors.test.ts';
const AU = 'test/integration/auth.test.ts';

const RULES: Record<string, Rule> = {
  'chat 1 (guest spend cap)': [{ file: GW, test: 'caps what an anonymous guest may spend per day' }],
  'chat 2 (json_object everywhere, json_schema where enforceable)': [
    { file: GW, test: 'json_schema to models that enforce it' },
  ],
  'chat 3 (JSON mode and verbatim methods stream)': [
    { file: GW, test: 'reads an image with prism-1 methods, streamed or not' },
  ],
  'chat 4 (reasoning_effort none/minimal/low)': [{ file: GW, test: 'accounts reasoning tokens by effort' }],
  'chat 5 (one input per structured model)': [
    { file: GW, test: 'holds a structured model to one input' },
    { file: EX, test: 'refuses bad input with the spec codes' },
  ],
  'chat 6 (video_max_frames too large is 400)': [
    { file: GW, test: 'frames to the limit' },
    { file: EX, test: 'reads on-screen text of a video' },
  ],
  'chat 7 (minimum bill, per-token wallet debit)': [
    { file: GW, test: 'bills at least $0.001 a call' },
    { file: GW, test: 'bills the wallet' },
  ],
  'chat 8 (flat typed method replies)': [{ file: GW, test: 'reads an image with prism-1 methods' }],
  'chat 9 (mask label maps)': { notApplicable: 'Prism has no segmentation model yet; no route returns masks.' },
  'chat 10 (failed pages keep status 200, unbilled)': [
    { file: EX, test: 'returns the pages that worked, and 502 without billing when every page failed' },
  ],
  'error 1 (capability_violation names the param)': [{ file: GW, test: 'refuses what a model cannot do' }],
  'error 2 (429 body, Retry-After, X-Prism-Upgrade)': [
    { file: GW, test: 'answers 429 with the window, tier and Retry-After' },
  ],
  'error 3 (queue full: 429 Retry-After 60)': [
    { file: 'test/unit/metering/request-queue.test.ts', test: 'refuses beyond maxWaiting with 429' },
  ],
  'error 4 (500 body with request_id, no internals)': [
    { file: ER, test: 'renders an unexpected failure as a top-level 500' },
  ],
  'error 5 (x-request-id echoed or minted)': [
    { file: ER, test: 'mints a request id when none is sent and echoes one' },
  ],
  'error 6 (503 cold start Retry-After 30)': [{ file: GW, test: 'refuses what a model cannot do' }],
  'error 7 (page tried three times; retry vs deterministic messages; no billing on 502)': [
    { file: 'test/unit/engines/pdf.engine.test.ts', test: 'after three tries' },
    { file: 'test/unit/engines/pdf.engine.test.ts', test: 'does not retry a page too large to render' },
    { file: EX, test: '502 without billing' },
  ],
  'error 8 (504 provider prefix, no partial result)': [
    { file: GW, test: 'answers 504 ttft_timeout before any byte' },
    { file: 'test/unit/gateway/upstream-client.test.ts', test: 'aborts at the total deadline with 504' },
  ],
  'error 9 (missing input on embeddings is 422 missing)': [{ file: GW, test: 'refuses bad embedding requests' }],
  'error 10 (402 and 503 bodies)': {
    notApplicable: 'The spec shows no body; ours use the wrapped shape (docs/errors.md).',
  },
  'auth 1-2 (bearer; anonymous forms on the gateway)': [{ file: AU, test: 'keeps the gateway anonymous' }],
  'auth 3 (anonymous by IP, users by account)': [
    { file: GW, test: 'answers 429 with the window, tier and Retry-After' },
  ],
  'auth 4 (unknown key rejected, never anonymous)': [{ file: AU, test: 'still rejects bad keys' }],
  'auth 5 (503 when keys cannot be looked up)': [
    { file: AU, test: 'answers 503 with Retry-After when the key store is down' },
  ],
  'auth 6 (hub and health open)': [{ file: EX, test: 'serves info, domains and schemas without a key' }],
  'auth 7 (tool server auth)': { notApplicable: 'The MCP tool server arrives with its issue.' },
};

describe('spec rules are each cited by a test', () => {
  const root = path.join(__dirname, '..', '..');
  const titles = new Map<string, string>();
  const titlesOf = (file: string): string => {
    if (!titles.has(file)) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      titles.set(file, [...text.matchAll(/\bit\(\s*'([^']+)'/g)].map((m) => m[1]).join('\n'));
    }
    return titles.get(file) ?? '';
  };

  it.each(Object.entries(RULES))('%s', (_rule, citation) => {
    if (!Array.isArray(citation)) {
      expect(citation.notApplicable.length).toBeGreaterThan(10);
      return;
    }
    for (const { file, test } of citation) expect(titlesOf(file)).toContain(test);
  });
});
