/**
 * The beam CTC decoder on hand-made probability matrices: where greedy decoding is wrong and the lexicon puts it
 * right, where digits stay digits, where strong optical evidence wins over the lexicon, and where the page's script
 * keeps a look-alike out. The character model and lexicon are the committed ones (assets/ocr/reader-lexicon.json).
 */
import {
  DEFAULT_BEAM_SETTINGS,
  decodeCtcBeam,
  isLatinPage,
  latinClasses,
  type BeamSettings,
} from '../../../src/engines/ocr/ctc-beam';
import { ctcStepsFromProbabilities, type CtcSteps } from '../../../src/engines/ocr/ppocr-models';
import { decodeCtcSteps } from '../../../src/engines/ocr/ppocr-recognize';
import {
  buildReaderLanguageModel,
  sharedReaderLanguageModel,
  symbolOf,
  WORD_START,
} from '../../../src/engines/ocr/reader-lm';

const alphabet = ['', 'A', 'H', 'L', 'M', 'N', 'S', 'O', 'T', '0', '1', '5', '6', '.', '月', ' '];
const SPACE = alphabet.length - 1;

/**
 * A crop's CTC output from a list of steps, each naming characters and their probabilities (the rest goes to the
 * blank); a blank step follows every step, as the recogniser's output does between characters.
 */
function crop(steps: Record<string, number>[]): CtcSteps {
  const rows: number[][] = [];
  for (const step of steps) {
    const row = alphabet.map((ch) => (ch === '' ? 0 : (step[ch] ?? 0)));
    row[0] = Math.max(0, 1 - row.reduce((a, b) => a + b, 0));
    rows.push(row);
    rows.push(alphabet.map((ch) => (ch === '' ? 0.98 : 0.02 / (alphabet.length - 1))));
  }
  return ctcStepsFromProbabilities(
    { data: Float32Array.from(rows.flat()), dims: [1, rows.length, alphabet.length] },
    SPACE,
  );
}

const word = (text: string, p = 0.95): Record<string, number>[] => Array.from(text, (ch) => ({ [ch]: p }));

function decodeBoth(out: CtcSteps, settings: Partial<BeamSettings> = {}): { greedy: string; beam: string } {
  const greedy = decodeCtcSteps(out, alphabet);
  const lm = sharedReaderLanguageModel();
  const [beam] = decodeCtcBeam(out, alphabet, greedy, lm, latinClasses(alphabet), {
    ...DEFAULT_BEAM_SETTINGS,
    ...settings,
  });
  return { greedy: greedy[0]?.text ?? '', beam: beam?.text ?? '' };
}

describe('beam CTC decoding with a character model and a lexicon', () => {
  it('puts right a letter greedy decoding got wrong when the right one is a close second and makes a lexicon word', () => {
    const out = crop([...word('SHAH'), { ' ': 0.6 }, ...word('ALA'), { N: 0.5, M: 0.42 }]);
    expect(decodeBoth(out)).toEqual({ greedy: 'SHAH ALAN', beam: 'SHAH ALAM' });
  });

  it('keeps a word out of the lexicon as read when the optical evidence is strong', () => {
    const out = crop([...word('SHAH'), { ' ': 0.6 }, ...word('ALA'), { N: 0.97, M: 0.02 }]);
    expect(decodeBoth(out)).toEqual({ greedy: 'SHAH ALAN', beam: 'SHAH ALAN' });
    // The same when the word is searched, not skipped as beyond doubt: the lexicon bonus does not outweigh the optics.
    expect(decodeBoth(out, { doubt: 0 })).toEqual({ greedy: 'SHAH ALAN', beam: 'SHAH ALAN' });
  });

  it('reads a digit where the context is numeric, and keeps the digits greedy read', () => {
    // A postcode whose first digit was read as S, and whose zeros are nearly O.
    const postcode = crop([{ S: 0.5, '5': 0.45 }, ...word('61'), { '0': 0.5, O: 0.45 }, { '0': 0.5, O: 0.45 }]);
    expect(decodeBoth(postcode)).toEqual({ greedy: 'S6100', beam: '56100' });
    const amount = crop([...word('15'), { '.': 0.9 }, { '5': 0.5, S: 0.45 }, { '0': 0.55, O: 0.4 }]);
    expect(decodeBoth(amount)).toEqual({ greedy: '15.50', beam: '15.50' });
  });

  it('keeps the letter of a number’s suffix that stands between marks (`(1125830-U)`)', () => {
    const suffixed = crop([...word('1150'), { '.': 0.9 }, { O: 0.5, '0': 0.45 }]);
    expect(decodeBoth(suffixed, { doubt: 0 })).toEqual({ greedy: '1150.O', beam: '1150.O' });
    // Inside a run that already holds digits the same doubt still reads a digit.
    const inRun = crop([...word('115'), { O: 0.5, '0': 0.45 }]);
    expect(decodeBoth(inRun, { doubt: 0 })).toEqual({ greedy: '115O', beam: '1150' });
  });

  it('reads a letter where the context is a word (`T0TAL` → `TOTAL`)', () => {
    const out = crop([...word('T'), { '0': 0.5, O: 0.45 }, ...word('TAL')]);
    expect(decodeBoth(out)).toEqual({ greedy: 'T0TAL', beam: 'TOTAL' });
  });

  it('keeps a character of another script out of a Latin page', () => {
    const out = crop([...word('61'), { 月: 0.55, '1': 0.3 }, ...word('50')]);
    expect(decodeBoth(out)).toEqual({ greedy: '61月50', beam: '61150' });
    expect(isLatinPage([{ text: '61月50 TOTAL AMOUNT', confidence: 1, steps: [] }])).toBe(true);
    expect(isLatinPage([{ text: '月月月 A', confidence: 1, steps: [] }])).toBe(false);
  });

  it('keeps greedy decoding’s words, spaces, confidence and one time step per character', () => {
    const out = crop([...word('SHAH'), { ' ': 0.6 }, ...word('ALA'), { N: 0.5, M: 0.42 }]);
    const greedy = decodeCtcSteps(out, alphabet);
    const [beam] = decodeCtcBeam(out, alphabet, greedy, sharedReaderLanguageModel(), latinClasses(alphabet));
    expect(beam?.confidence).toBe(greedy[0]?.confidence);
    expect(beam?.steps).toHaveLength(beam?.text.length ?? -1);
    expect(beam?.steps).toEqual(greedy[0]?.steps);
  });

  it('falls back to greedy decoding when the output carries no top classes', () => {
    const { top: _top, ...bare } = crop(word('ALAN'));
    const greedy = decodeCtcSteps(bare, alphabet);
    expect(decodeCtcBeam(bare, alphabet, greedy, sharedReaderLanguageModel(), latinClasses(alphabet))).toEqual(greedy);
  });
});

describe('the reader character model', () => {
  const lm = buildReaderLanguageModel(
    [
      ['TOTAL', 1],
      ['00.00', 5],
    ],
    ['TOTAL'],
  );

  it('scores case-folded letters, one digit symbol, and strips marks around a lexicon word', () => {
    expect(lm.inLexicon('Total:')).toBe(true);
    expect(lm.inLexicon('(TOTAL)')).toBe(true);
    expect(lm.inLexicon('TOTALS')).toBe(false);
    expect(lm.inLexicon('T')).toBe(false);
  });

  it('makes a digit likelier after digits than a letter, and a letter likelier inside a word', () => {
    const model = sharedReaderLanguageModel();
    const [zero, oh, t] = [symbolOf('0'), symbolOf('O'), symbolOf('t')];
    expect(model.logP(zero, zero, zero)).toBeGreaterThan(model.logP(zero, zero, oh));
    expect(model.logP(WORD_START, t, oh)).toBeGreaterThan(model.logP(WORD_START, t, zero));
    expect(symbolOf('5')).toBe(zero);
    expect(model.size).toBeGreaterThan(5000);
  });
});
