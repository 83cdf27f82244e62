import { parseCredential } from '../../../src/services/auth.service';
import { cleanFilename } from '../../../src/services/files.service';
import { formatBytes } from '../../../src/domain/errors';

describe('parseCredential', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['Bearer ', null],
    ['Bearer', null],
    ['bearer prism', null],
    ['Bearer   prism  ', null],
    ['Bearer prism_abc', 'prism_abc'],
    ['Basic dXNlcg==', 'Basic dXNlcg=='],
  ])('%j -> %j', (header, expected) => {
    expect(parseCredential(header)).toBe(expected);
  });
});

describe('cleanFilename', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\scan.png', 'scan.png'],
    ['bad\u0000name\u001f.txt', 'badname.txt'],
    ['', 'upload'],
    ['x'.repeat(300), 'x'.repeat(255)],
  ])('%j -> %j', (input, expected) => {
    expect(cleanFilename(input)).toBe(expected);
  });
});

describe('formatBytes', () => {
  it.each([
    [100, '100 bytes'],
    [2048, '2 KiB'],
    [512 * 1024 * 1024, '512 MiB'],
    [1500, '1500 bytes'],
  ])('%d -> %s', (n, text) => expect(formatBytes(n)).toBe(text));
});
