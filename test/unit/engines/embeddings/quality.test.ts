/**
 * Quality checks of the local text embedder on a small hand-made set (quality-set.ts). Deterministic: the vectors
 * come from the committed word-vector table. The thresholds are below the measured figures, which the test prints.
 */
import { createTextEmbeddingEngine } from '../../../../src/engines/embeddings/text-embedding.engine';
import { cosine, fromBase64Float32, toBase64Float32 } from '../../../../src/engines/embeddings/vector-math';
import { HARD_TRIPLETS, NEAR_DUPLICATES, QUALITY_TRIPLETS } from './quality-set';

const engine = createTextEmbeddingEngine();

interface Scores {
  wins: number;
  top1: number;
  meanPositive: number;
  meanNegative: number;
  /** Per anchor, the paraphrases sorted by similarity (indices). */
  rankings: number[][];
}

function score(dimensions: number): Scores {
  const embed = (texts: string[]) => engine.embedTexts(texts, { dimensions }).vectors;
  const anchors = embed(QUALITY_TRIPLETS.map((t) => t.anchor));
  const paraphrases = embed(QUALITY_TRIPLETS.map((t) => t.paraphrase));
  const unrelated = embed(QUALITY_TRIPLETS.map((t) => t.unrelated));
  let wins = 0;
  let top1 = 0;
  let positive = 0;
  let negative = 0;
  const rankings: number[][] = [];
  anchors.forEach((anchor, i) => {
    const pos = cosine(anchor, paraphrases[i] as Float32Array);
    const neg = cosine(anchor, unrelated[i] as Float32Array);
    positive += pos;
    negative += neg;
    if (pos > neg) wins += 1;
    const sims = paraphrases.map((p) => cosine(anchor, p));
    const order = sims.map((_, k) => k).sort((a, b) => (sims[b] as number) - (sims[a] as number));
    if (order[0] === i) top1 += 1;
    rankings.push(order);
  });
  const n = QUALITY_TRIPLETS.length;
  return { wins, top1, meanPositive: positive / n, meanNegative: negative / n, rankings };
}

describe('text embedding quality (hand-made set)', () => {
  const n = QUALITY_TRIPLETS.length;
  const full = score(768);

  it('scores paraphrases above unrelated sentences for most pairs', () => {
    console.log(
      `768 dims: paraphrase > unrelated ${full.wins}/${n}, paraphrase top-1 among ${n} ${full.top1}/${n}, ` +
        `mean cos paraphrase ${full.meanPositive.toFixed(3)} vs unrelated ${full.meanNegative.toFixed(3)}`,
    );
    expect(full.wins).toBeGreaterThanOrEqual(Math.ceil(n * 0.9));
    expect(full.top1).toBeGreaterThanOrEqual(Math.ceil(n * 0.75));
    expect(full.meanPositive - full.meanNegative).toBeGreaterThan(0.3);
  });

  it.each([512, 256, 128])('keeps the ranking when truncated to %i dims', (dimensions) => {
    const short = score(dimensions);
    console.log(`${dimensions} dims: wins ${short.wins}/${n}, top-1 ${short.top1}/${n}`);
    expect(short.wins).toBeGreaterThanOrEqual(full.wins - 1);
    expect(short.top1).toBeGreaterThanOrEqual(full.top1 - 2);
    // The best match of each anchor stays among the top 3 of the full-length ranking.
    const kept = short.rankings.filter((order, i) => full.rankings[i]?.slice(0, 3).includes(order[0] as number));
    expect(kept.length).toBeGreaterThanOrEqual(n - 1);
  });

  it('keeps near-duplicates (typos, casing, identifiers) very close', () => {
    for (const [a, b] of NEAR_DUPLICATES) {
      const [va, vb] = engine.embedTexts([a, b]).vectors as [Float32Array, Float32Array];
      expect(cosine(va, vb)).toBeGreaterThan(0.8);
    }
  });

  it('tells apart texts that differ only in numbers or out-of-vocabulary codes (the hashed block)', () => {
    const [query, right, wrong] = engine.embedTexts(
      ['invoice INV-4471 overdue', 'Reminder: invoice INV-4471 is overdue', 'Reminder: invoice INV-9923 is overdue'],
      { promptName: 'SearchQuery' },
    ).vectors as [Float32Array, Float32Array, Float32Array];
    expect(cosine(query, right)).toBeGreaterThan(cosine(query, wrong) + 0.05);
  });

  it('reports the hard cases (word order, negation, word sense), where a bag of words is weak', () => {
    const wins = HARD_TRIPLETS.filter((t) => {
      const [a, p, d] = engine.embedTexts([t.anchor, t.paraphrase, t.unrelated]).vectors;
      return cosine(a as Float32Array, p as Float32Array) > cosine(a as Float32Array, d as Float32Array);
    }).length;
    console.log(`hard triplets: paraphrase > lexical distractor ${wins}/${HARD_TRIPLETS.length}`);
    expect(wins).toBeGreaterThanOrEqual(1);
  });

  it('gives unit vectors at every length', () => {
    for (const dimensions of [768, 512, 256, 128]) {
      for (const vec of engine.embedTexts(['A unit vector, please.', 'zzzz qqqq 1234'], { dimensions }).vectors) {
        let sum = 0;
        for (const v of vec) sum += v * v;
        expect(Math.sqrt(sum)).toBeCloseTo(1, 5);
      }
    }
  });
});

describe('toBase64Float32', () => {
  it('writes little-endian float32 and round-trips', () => {
    expect(toBase64Float32([1, -2])).toBe(Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).toString('base64'));
    const vec = engine.embedTexts(['round trip me']).vectors[0] as Float32Array;
    const encoded = toBase64Float32(vec);
    expect(Buffer.from(encoded, 'base64')).toHaveLength(768 * 4);
    expect(Array.from(fromBase64Float32(encoded))).toEqual(Array.from(vec));
    const view = new DataView(Buffer.from(encoded, 'base64').buffer);
    expect(view.getFloat32(4, true)).toBe(vec[1]);
  });
});
