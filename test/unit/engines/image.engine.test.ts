import sharp from 'sharp';
import { createImageEngine } from '../../../src/engines/image/image.engine';
import { failure } from '../../helpers/app-error';
import { renderTextImage } from '../../helpers/media-fixtures';

describe('image engine', () => {
  const engine = createImageEngine({ maxDimension: 500 });
  const png = renderTextImage(['Hello'], { width: 300, height: 120 });

  it('describes an image', async () => {
    expect(await engine.inspect(png)).toEqual({ width: 300, height: 120, format: 'png' });
  });

  it('applies the EXIF orientation to the reported size and to the pixels', async () => {
    const rotated = await sharp(png).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    expect(await engine.inspect(rotated)).toEqual({ width: 120, height: 300, format: 'jpeg' });
    const out = await engine.toPng(rotated);
    expect([out.width, out.height]).toEqual([120, 300]);
    expect((await sharp(out.png).metadata()).orientation).toBeUndefined();
  });

  it('converts to PNG and shrinks to the size limit', async () => {
    const big = await sharp({ create: { width: 1000, height: 400, channels: 3, background: '#fff' } })
      .jpeg()
      .toBuffer();
    const out = await engine.toPng(big);
    expect(out).toMatchObject({ width: 500, height: 200, format: 'png', scale: 0.5 });
    expect((await sharp(out.png).metadata()).format).toBe('png');
    const small = await engine.toPng(png);
    expect(small).toMatchObject({ width: 300, height: 120, scale: 1 });
  });

  it.each([
    ['garbage', Buffer.from('definitely not an image'), /not an image/],
    ['an empty buffer', Buffer.alloc(0), /empty/],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>'), /'svg' is not accepted/],
  ])('refuses %s with a 400 invalid_media', async (_name, bytes, message) => {
    const error = await failure(engine.inspect(bytes));
    expect(error).toMatchObject({ status: 400, code: 'invalid_media' });
    expect(error.message).toMatch(message);
  });

  it('refuses a truncated image when decoding, without leaking library details', async () => {
    const jpeg = await sharp({ create: { width: 400, height: 400, channels: 3, background: '#f0f' } })
      .jpeg()
      .toBuffer();
    const error = await failure(engine.toPng(jpeg.subarray(0, jpeg.length >> 1)));
    expect(error).toMatchObject({ status: 400, code: 'invalid_media' });
    expect(error.message).toBe('Invalid image: the image data is corrupt or truncated');
  });

  it('refuses images over the pixel limit', async () => {
    const strict = createImageEngine({ maxInputPixels: 1000 });
    const error = await failure(strict.inspect(png));
    expect(error).toMatchObject({ code: 'invalid_media' });
    expect(error.message).toMatch(/300x120 is over the limit of 1000 pixels/);
  });
});
