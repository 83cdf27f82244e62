/**
 * docs/errors.md lists every error code the code base can emit, and nothing else.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../src/domain/errors';

describe('error catalogue', () => {
  it('documents exactly the codes in ERROR_CODES', () => {
    const doc = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
    const section = doc.split('## Codes')[1] ?? '';
    const documented = [...section.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) => m[1]);
    expect([...documented].sort()).toEqual([...ERROR_CODES].sort());
  });
});
