/**
 * Inline inputs: base64 data URLs and bare base64 decode to their bytes; anything else is refused with a reason.
 */
import { DataUrlError, decodeDataUrl } from '../../../src/lib/data-url';

describe('data URLs', () => {
  const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10]);

  it('decodes base64 data URLs and bare base64', () => {
    expect(decodeDataUrl(`data:image/png;base64,${bytes.toString('base64')}`).bytes).toEqual(bytes);
    expect(decodeDataUrl(bytes.toString('base64')).bytes).toEqual(bytes);
    expect(decodeDataUrl(` ${bytes.toString('base64url')}\n`).bytes).toEqual(bytes);
    expect(decodeDataUrl(`data:Image/JPEG;name=x.jpg;base64,${bytes.toString('base64')}`)).toEqual({
      mediaType: 'image/jpeg',
      bytes,
    });
  });

  it.each([
    ['a non-base64 data URL', 'data:image/png,rawbytes'],
    ['text that is not base64', 'hello world!'],
    ['an empty string', ''],
    ['an impossible base64 length', 'abcde'],
  ])('refuses %s', (_name, input) => {
    expect(() => decodeDataUrl(input)).toThrow(DataUrlError);
  });
});
