/**
 * framesToLayout: OCR per frame, consecutive duplicates dropped, failures kept as error pages.
 */
import type { LayoutPage } from '../../../../src/engines/types';
import { framesToLayout, normalisedText } from '../../../../src/engines/media/video-layout';
import type { FrameRecognizer, VideoFrame } from '../../../../src/engines/media/types';
import { CancelController, WorkCancelledError } from '../../../../src/lib/cancel';
import { runForTenant } from '../../../../src/lib/work-tenant';

/** Frames whose PNG bytes are just the text the fake OCR should "read" ('!' makes it throw). */
const frames = (texts: string[]): VideoFrame[] =>
  texts.map((text, index) => ({ index, timeS: index * 0.5, png: Buffer.from(text), width: 64, height: 32 }));

const page = (text: string): LayoutPage => ({
  index: 7,
  width: 64,
  height: 32,
  source: 'ocr',
  status: 'ok',
  lines: text
    ? text.split('\n').map((line) => ({ text: line, confidence: 0.9, box: { x0: 0, y0: 0, x1: 1, y1: 1 }, words: [] }))
    : [],
});

const fakeOcr: FrameRecognizer = {
  async recognize(png) {
    const text = png.toString();
    if (text === '!') throw new Error('tesseract exploded at /srv/secret/path');
    return page(text);
  },
};

describe('framesToLayout', () => {
  it('drops frames whose text equals the previous kept frame, renumbers and stamps times', async () => {
    const pages = await framesToLayout(frames(['A', 'A', 'B', 'B  ', 'A', '', '']), fakeOcr);
    expect(pages.map((p) => [p.index, normalisedText(p), p.timeS])).toEqual([
      [0, 'A', 0],
      [1, 'B', 1],
      [2, 'A', 2],
      [3, '', 2.5],
    ]);
  });

  it('compares text across line breaks and spacing', async () => {
    const pages = await framesToLayout(frames(['TOTAL  12.00\nPAID', 'TOTAL 12.00 PAID']), fakeOcr);
    expect(pages).toHaveLength(1);
  });

  it('keeps a failed frame as an error page without leaking the cause, and dedupes across it', async () => {
    const pages = await framesToLayout(frames(['A', '!', 'A', 'C']), fakeOcr);
    expect(pages.map((p) => p.status)).toEqual(['ok', 'error', 'ok']);
    expect(pages[1]).toMatchObject({ index: 1, timeS: 0.5, lines: [], source: 'ocr' });
    expect(pages[1]?.error).toMatch(/OCR failed/);
    expect(pages[1]?.error).not.toMatch(/secret/);
    expect(pages[2]).toMatchObject({ index: 2, timeS: 1.5 });
  });

  it('returns no pages for no frames', async () => {
    expect(await framesToLayout([], fakeOcr)).toEqual([]);
  });

  it('starts no frame once the work signal aborts, and a cancelled read is not an error page', async () => {
    const cancel = new CancelController();
    const read: string[] = [];
    const ocr: FrameRecognizer = {
      async recognize(png) {
        read.push(png.toString());
        if (read.length === 2) cancel.abort();
        return page(png.toString());
      },
    };
    const run = runForTenant('org', () => framesToLayout(frames(['A', 'B', 'C', 'D']), ocr), cancel.signal);
    await expect(run).rejects.toBeInstanceOf(WorkCancelledError);
    expect(read).toEqual(['A', 'B']);

    // What the OCR pool throws for a frame whose read was cancelled while it waited for a worker.
    const dropped: FrameRecognizer = {
      recognize: () => Promise.reject(new WorkCancelledError()),
    };
    await expect(framesToLayout(frames(['A']), dropped)).rejects.toBeInstanceOf(WorkCancelledError);
  });
});
