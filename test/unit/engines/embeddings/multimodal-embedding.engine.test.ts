import sharp from 'sharp';
import { createLogger } from '../../../../src/lib/logger';
import { createOcrEngine } from '../../../../src/engines/ocr/ocr.engine';
import {
  createMultimodalEmbeddingEngine,
  type ImageTextReader,
} from '../../../../src/engines/embeddings/multimodal-embedding.engine';
import { createTextEmbeddingEngine } from '../../../../src/engines/embeddings/text-embedding.engine';
import { cosine } from '../../../../src/engines/embeddings/vector-math';
import type { LayoutPage } from '../../../../src/engines/types';
import { renderTextImage } from '../../../helpers/media-fixtures';
import { failure, norm } from './helpers';

/** A fake OCR that "reads" the text registered for an image's exact bytes. */
function fakeOcr(): ImageTextReader & { texts: Map<Buffer, string>; calls: number } {
  const texts = new Map<Buffer, string>();
  const reader = {
    texts,
    calls: 0,
    async recognize(image: Buffer): Promise<LayoutPage> {
      reader.calls += 1;
      const text = [...texts.entries()].find(([key]) => key.equals(image))?.[1] ?? '';
      const box = { x0: 0, y0: 0, x1: 10, y1: 10 };
      const lines = text
        ? [{ text, box, confidence: 0.9, words: text.split(' ').map((w) => ({ text: w, box, confidence: 0.9 })) }]
        : [];
      return { index: 0, width: 10, height: 10, source: 'ocr', lines, status: 'ok' };
    },
  };
  return reader;
}

/** A synthetic "photo": coloured shapes on a gradient, rendered from SVG. */
function scene(colours: [string, string, string], shift = 0): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="240">
    <defs><linearGradient id="g"><stop offset="0" stop-color="${colours[0]}"/><stop offset="1" stop-color="#ffffff"/></linearGradient></defs>
    <rect width="320" height="240" fill="url(#g)"/>
    <circle cx="${100 + shift}" cy="120" r="60" fill="${colours[1]}"/>
    <rect x="${190 + shift}" y="40" width="90" height="150" fill="${colours[2]}"/>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

const text = createTextEmbeddingEngine();

describe('multimodal embedding engine', () => {
  const ocr = fakeOcr();
  const frames: Buffer[] = [];
  const engine = createMultimodalEmbeddingEngine({
    text,
    ocr,
    sampleFrames: async () => frames,
    pdfText: async (pdf) => pdf.toString('utf8').split('\f'),
    ocrFrames: 2,
  });

  it('embeds text into the text region (the text model space) with a 2048-value unit vector', async () => {
    const batch = await engine.embed(['quarterly sales report']);
    const vec = batch.vectors[0] as Float32Array;
    expect([batch.dimensions, vec.length, batch.promptTokens]).toEqual([2048, 2048, 3]);
    expect(norm(vec)).toBeCloseTo(1, 5);
    const plain = text.embedTexts(['quarterly sales report']).vectors[0] as Float32Array;
    expect(cosine(vec.slice(0, 768), plain)).toBeCloseTo(1, 5);
    expect(norm(vec.slice(768))).toBe(0);
  });

  it('puts an image near the text it shows (via OCR) and far from other text', async () => {
    const image = renderTextImage(['Quarterly sales report'], { width: 600, height: 120 });
    ocr.texts.set(image, 'Quarterly sales report');
    const [img, same, other] = (
      await engine.embed([[{ type: 'image', data: image }], 'quarterly sales report', 'volcanic eruption in Iceland'])
    ).vectors;
    expect(cosine(img as Float32Array, same as Float32Array)).toBeGreaterThan(0.6);
    expect(cosine(img as Float32Array, other as Float32Array)).toBeLessThan(0.2);
  });

  it('matches re-encoded, resized copies of a picture by pixels, and tells different pictures apart', async () => {
    const original = await scene(['#2050c0', '#e03020', '#20a040']);
    const copy = await sharp(original).resize(200).jpeg({ quality: 70 }).toBuffer();
    const shifted = await scene(['#2050c0', '#e03020', '#20a040'], 15);
    const different = await scene(['#f0d000', '#101010', '#8020c0'], -60);
    const [a, b, c, d] = (
      await engine.embed([original, copy, shifted, different].map((data) => [{ type: 'image' as const, data }]))
    ).vectors;
    const sims = [cosine(a!, b!), cosine(a!, c!), cosine(a!, d!)];
    console.log(
      `pixel similarity: jpeg copy ${sims[0]?.toFixed(3)}, shifted ${sims[1]?.toFixed(3)}, different ${sims[2]?.toFixed(3)}`,
    );
    expect(sims[0]).toBeGreaterThan(0.95);
    expect(sims[0]).toBeGreaterThan(sims[1] as number);
    expect(sims[1]).toBeGreaterThan(sims[2] as number);
    expect(sims[2]).toBeLessThan(0.7);
    // An image without readable text has no text region, so it is not close to any text.
    const [textVec] = (await engine.embed(['red circle and green rectangle'])).vectors;
    expect(cosine(a!, textVec!)).toBe(0);
  });

  it('pools video frames (pixels of all, OCR of a few) and counts OCR tokens', async () => {
    frames.length = 0;
    for (let i = 0; i < 5; i += 1) frames.push(await scene(['#2050c0', '#e03020', '#20a040'], i * 3));
    ocr.texts.set(frames[1] as Buffer, 'Breaking news tonight');
    const before = ocr.calls;
    const batch = await engine.embed([
      [{ type: 'video', data: Buffer.from('video') }],
      [{ type: 'image', data: frames[0] as Buffer }],
      'breaking news tonight',
    ]);
    expect(ocr.calls - before).toBe(2 + 1);
    expect(batch.promptTokens).toBe(3 + 3);
    const [video, frame, caption] = batch.vectors;
    // The text-less frame only shares the pixel region (40% of the video's squared norm): √0.4 × pixel cosine.
    expect(cosine(video!, frame!)).toBeGreaterThan(0.6);
    expect(cosine(video!, caption!)).toBeGreaterThan(0.7);
  });

  it('pools text and document pages into the text region, and truncates to 1024 dims on request', async () => {
    const pdf = Buffer.from('Page one.\fPage two.');
    const batch = await engine.embed(
      [
        [
          { type: 'text', text: 'cover' },
          { type: 'document', data: pdf },
        ],
      ],
      {
        dimensions: 1024,
        documentPages: [1],
      },
    );
    expect(batch.promptTokens).toBe(1 + 3);
    expect(batch.vectors[0]).toHaveLength(1024);
    expect(norm(batch.vectors[0] as Float32Array)).toBeCloseTo(1, 5);
    expect((await failure(engine.embed(['x'], { dimensions: 768 }))).param).toBe('dimensions');
  });

  it('refuses audio, token ids, undecodable images and parts without an injected reader', async () => {
    const audio = await failure(engine.embed([[{ type: 'audio', data: Buffer.from('x') }]]));
    expect([audio.status, audio.code]).toEqual([400, 'capability_violation']);
    expect((await failure(engine.embed([[1, 2, 3]]))).code).toBe('capability_violation');
    const broken = await failure(engine.embed([[{ type: 'image', data: Buffer.from('not an image') }]]));
    expect([broken.status, broken.code]).toEqual([400, 'invalid_media']);
    const bare = createMultimodalEmbeddingEngine({ text });
    expect((await failure(bare.embed([[{ type: 'video', data: Buffer.from('x') }]]))).code).toBe(
      'capability_violation',
    );
    expect((await failure(bare.embed([[{ type: 'document', data: Buffer.from('x') }]]))).code).toBe(
      'capability_violation',
    );
    expect((await failure(engine.embed([[]]))).param).toBe('input');
  });
});

describe('multimodal embedding engine with the real OCR engine', () => {
  const ocr = createOcrEngine({ logger: createLogger('silent'), workers: 1 });
  afterAll(() => ocr.close());

  it('puts a rendered sentence near the same sentence typed', async () => {
    const engine = createMultimodalEmbeddingEngine({ text, ocr });
    const image = renderTextImage(['The invoice is overdue.', 'Please pay within seven days.']);
    const [img, same, other] = (
      await engine.embed([
        [{ type: 'image', data: image }],
        'The invoice is overdue. Please pay within seven days.',
        'Penguins live in Antarctica and eat fish.',
      ])
    ).vectors;
    const near = cosine(img!, same!);
    const far = cosine(img!, other!);
    console.log(`real OCR: image vs same text ${near.toFixed(3)}, vs other text ${far.toFixed(3)}`);
    expect(near).toBeGreaterThan(0.6);
    expect(far).toBeLessThan(0.2);
  });
});
