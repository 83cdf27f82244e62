import {
  createTextEmbeddingEngine,
  TEXT_EMBEDDING_DIMENSIONS,
} from '../../../../src/engines/embeddings/text-embedding.engine';
import { countTokens, scanText, truncateToTokens } from '../../../../src/engines/embeddings/text-tokenizer';
import { cosine } from '../../../../src/engines/embeddings/vector-math';
import { failure, norm } from './helpers';

describe('text embedding engine', () => {
  const engine = createTextEmbeddingEngine({
    pdfText: async (pdf) => pdf.toString('utf8').split('\f'),
    maxDocumentPages: 10,
  });

  it('returns one 768-value unit vector per input by default, and the token count', async () => {
    const batch = await engine.embed(['The cat sat on the mat.', 'Invoices are due in thirty days']);
    expect(batch.dimensions).toBe(768);
    expect(batch.promptName).toBe('Classification');
    expect(batch.vectors).toHaveLength(2);
    for (const vec of batch.vectors) {
      expect(vec).toHaveLength(768);
      expect(norm(vec)).toBeCloseTo(1, 5);
    }
    expect(batch.promptTokens).toBe(7 + 6);
  });

  it.each(TEXT_EMBEDDING_DIMENSIONS)('truncates to %i values and re-normalises', (dimensions) => {
    const full = engine.embedTexts(['Matryoshka embeddings keep the first values']).vectors[0] as Float32Array;
    const short = engine.embedTexts(['Matryoshka embeddings keep the first values'], { dimensions })
      .vectors[0] as Float32Array;
    expect(short).toHaveLength(dimensions);
    expect(norm(short)).toBeCloseTo(1, 5);
    expect(cosine(short, full.slice(0, dimensions))).toBeCloseTo(1, 5);
  });

  it('is deterministic: identical input gives an identical vector, in any batch position', async () => {
    const a = await engine.embed(['same words here', 'other']);
    const b = await engine.embed(['different first', 'same words here']);
    expect(Array.from(a.vectors[0] as Float32Array)).toEqual(Array.from(b.vectors[1] as Float32Array));
    expect(engine.embedTexts(['same words here']).vectors[0]).toEqual(a.vectors[0]);
  });

  it('refuses unknown prompt names and unsupported dimensions with 400 and the parameter name', async () => {
    const badPrompt = await failure(engine.embed(['x'], { promptName: 'Summarize' }));
    expect([badPrompt.status, badPrompt.param]).toEqual([400, 'prompt_name']);
    const badDims = await failure(engine.embed(['x'], { dimensions: 300 }));
    expect([badDims.status, badDims.param]).toEqual([400, 'dimensions']);
  });

  it('accepts every listed prompt name; query prompts drop question scaffolding', async () => {
    for (const promptName of ['SearchQuery', 'QuestionAnswering', 'FactChecking', 'CodeRetrieval', 'Clustering']) {
      expect((await engine.embed(['what is a mortgage?'], { promptName })).promptName).toBe(promptName);
    }
    const doc = engine.embedTexts(['A mortgage is a loan used to buy a house.'], { promptName: 'Document' })
      .vectors[0] as Float32Array;
    const asQuery = engine.embedTexts(['What is a mortgage?'], { promptName: 'SearchQuery' })
      .vectors[0] as Float32Array;
    const plain = engine.embedTexts(['What is a mortgage?'], { promptName: 'Document' }).vectors[0] as Float32Array;
    expect(cosine(asQuery, doc)).toBeGreaterThan(cosine(plain, doc));
    // A query made only of scaffolding keeps its words rather than becoming empty.
    expect(
      norm(engine.embedTexts(['what is it?'], { promptName: 'SearchQuery' }).vectors[0] as Float32Array),
    ).toBeCloseTo(1, 5);
  });

  it('fails inputs over the 8,192-token window unless truncate_prompt_tokens is given', async () => {
    const long = 'word '.repeat(9000);
    const error = await failure(engine.embed(['short', long]));
    expect([error.status, error.param]).toEqual([400, 'input']);
    expect(error.message).toMatch(/Input 1 has 9000 tokens.*8192/);
    const cut = await engine.embed([long], { truncatePromptTokens: 100 });
    expect(cut.promptTokens).toBe(100);
    expect((await engine.embed([long], { truncatePromptTokens: -1 })).promptTokens).toBe(8192);
    expect((await engine.embed(['a b c'], { truncatePromptTokens: 100 })).promptTokens).toBe(3);
    const bad = await failure(engine.embed(['x'], { truncatePromptTokens: 0 }));
    expect(bad.param).toBe('truncate_prompt_tokens');
  });

  it('keeps the head of a truncated input', async () => {
    const head = 'The invoice total is due on Friday.';
    const tail = ' Unrelated volcano eruption lava ash cloud.'.repeat(50);
    const cut = engine.embedTexts([head + tail], { truncatePromptTokens: countTokens(head) }).vectors[0];
    expect(cut).toEqual(engine.embedTexts([head]).vectors[0]);
  });

  it('embeds token-id inputs as hashed tokens (comparable with other id lists, not with text)', async () => {
    const batch = await engine.embed([
      [101, 2023, 2003, 1037, 3231, 102],
      [101, 2023, 2003, 1037, 3231, 102],
      [101, 9999, 8888, 7777, 102],
    ]);
    expect(batch.promptTokens).toBe(17);
    expect(cosine(batch.vectors[0] as Float32Array, batch.vectors[1] as Float32Array)).toBeCloseTo(1, 6);
    expect(cosine(batch.vectors[0] as Float32Array, batch.vectors[2] as Float32Array)).toBeLessThan(0.6);
    const window = await failure(engine.embed([Array.from({ length: 8193 }, (_, i) => i)]));
    expect(window.param).toBe('input');
    expect(
      (await engine.embed([Array.from({ length: 9000 }, (_, i) => i)], { truncatePromptTokens: 10 })).promptTokens,
    ).toBe(10);
    const bad = await failure(engine.embed([[1, -2, 3.5]]));
    expect([bad.status, bad.param]).toEqual([400, 'input']);
  });

  it('refuses empty inputs, and embeds punctuation-only text', async () => {
    expect((await failure(engine.embed(['   ']))).param).toBe('input');
    expect((await failure(engine.embed([[]]))).param).toBe('input');
    expect(norm((await engine.embed(['?!'])).vectors[0] as Float32Array)).toBeCloseTo(1, 5);
  });

  it('pools text parts and document pages of one input into one vector under one window', async () => {
    const pdf = Buffer.from('Page one about invoices.\fPage two about invoices and payments.\fPage three.');
    const batch = await engine.embed([
      [
        { type: 'text', text: 'Invoice summary' },
        { type: 'document', data: pdf },
      ],
    ]);
    expect(batch.vectors).toHaveLength(1);
    expect(batch.promptTokens).toBe(2 + 5 + 7 + 3);
    const firstPage = await engine.embed([[{ type: 'document', data: pdf }]], { documentPages: [0] });
    expect(firstPage.promptTokens).toBe(5);
    const range = await engine.embed([[{ type: 'document', data: pdf }]], { documentPages: [[1, 3]] });
    expect(range.promptTokens).toBe(10);
    expect((await engine.embed([[{ type: 'document', data: pdf }]], { documentMaxPages: 1 })).promptTokens).toBe(5);
    expect((await failure(engine.embed([[{ type: 'document', data: pdf }]], { documentPages: [7] }))).param).toBe(
      'document_pages',
    );
    expect((await failure(engine.embed([[{ type: 'document', data: pdf }]], { documentMaxPages: 11 }))).param).toBe(
      'document_max_pages',
    );
  });

  it('refuses images, video and audio, and documents without a PDF reader', async () => {
    for (const type of ['image', 'video', 'audio'] as const) {
      const error = await failure(engine.embed([[{ type, data: Buffer.from('x') }]]));
      expect([error.status, error.code]).toEqual([400, 'capability_violation']);
    }
    const plain = createTextEmbeddingEngine();
    expect((await failure(plain.embed([[{ type: 'document', data: Buffer.from('x') }]]))).code).toBe(
      'capability_violation',
    );
  });
});

describe('text tokenizer', () => {
  it('counts words and punctuation marks', () => {
    expect(countTokens("Don't panic: it's 3.5 km!")).toBe(9);
    expect(scanText("Don't panic: it's 3.5 km!").words).toEqual(["Don't", 'panic', "it's", '3', '5', 'km']);
    expect(countTokens('well-known café 😀')).toBe(3);
    expect(countTokens('')).toBe(0);
  });

  it('truncates to a token prefix', () => {
    expect(truncateToTokens('one, two three', 2)).toBe('one,');
    expect(truncateToTokens('one two', 5)).toBe('one two');
    expect(truncateToTokens('one two', 0)).toBe('');
  });
});
