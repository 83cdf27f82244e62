/**
 * The local decision engine on generated frames: which questions it answers and how, the measures themselves
 * (text lines vs blank, noise and a smooth gradient; brightness; colour; change), and refusal of non-frames.
 */
import sharp from 'sharp';
import { createDecisionEngine, type DecisionQuestion } from '../../../src/engines/decision/decision.engine';
import { decodeFrame, frameFormat } from '../../../src/engines/decision/frame-pixels';
import { textLineCount } from '../../../src/engines/decision/frame-measures';
import { matchKind } from '../../../src/engines/decision/question-kinds';
import { blockFrame, noiseFrame, solidFrame, textFrame } from '../../helpers/decision-frames';

const q = (question: string, type: DecisionQuestion['type'], extra: Partial<DecisionQuestion> = {}) => ({
  id: 'q',
  question,
  type,
  ...extra,
});

describe('question kinds', () => {
  it('matches wording and type to a kind, or to nothing', () => {
    expect(matchKind(q('Is there any text?', 'boolean'))?.kind).toBe('text_present');
    expect(matchKind(q('Does the text contain "EXIT 12"?', 'boolean'))).toMatchObject({
      kind: 'text_contains',
      argument: 'EXIT 12',
    });
    expect(matchKind(q('What does the sign say?', 'string'))?.kind).toBe('text_read');
    expect(matchKind(q('How many lines of text?', 'integer'))?.kind).toBe('text_line_count');
    expect(matchKind(q('Is it dark in the room?', 'boolean'))).toMatchObject({ kind: 'brightness', argument: 'dark' });
    expect(matchKind(q('Has anything moved?', 'boolean'))?.kind).toBe('change');
    expect(matchKind(q('Which colour is the light?', 'enum', { options: ['red', 'green'] }))?.kind).toBe(
      'dominant_colour',
    );
    // The wording fits but the type does not, or nothing fits: not answered locally.
    expect(matchKind(q('Is there text?', 'string'))).toBeNull();
    expect(matchKind(q('How bright is it?', 'string'))).toBeNull();
    expect(matchKind(q('Is the person smiling?', 'boolean'))).toBeNull();
  });
});

describe('frame measures', () => {
  it('counts text lines and finds none in blank, noisy or smooth frames', async () => {
    const lines = async (frame: Buffer) => textLineCount(await decodeFrame(frame));
    expect(await lines(textFrame(['one', 'two', 'three', 'four']))).toBe(4);
    expect(await lines(await solidFrame('#ffffff'))).toBe(0);
    expect(await lines(await noiseFrame(640, 480))).toBe(0);
    const raw = Buffer.alloc(640 * 480 * 3);
    for (let i = 0; i < raw.length; i += 1) raw[i] = Math.floor(((i / 3) % 640) / 2.5);
    const gradient = await sharp(raw, { raw: { width: 640, height: 480, channels: 3 } })
      .jpeg()
      .toBuffer();
    expect(await lines(gradient)).toBe(0);
    // Light text on a dark background counts too.
    expect(
      await lines(
        await sharp(textFrame(['white', 'on black']))
          .negate()
          .jpeg()
          .toBuffer(),
      ),
    ).toBe(2);
  });

  it('shrinks frames to the working size, turned upright when EXIF says so', async () => {
    const frame = textFrame();
    expect(await decodeFrame(frame)).toMatchObject({ width: 320, height: 240 });
    const sideways = await sharp(frame).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    expect(await decodeFrame(sideways)).toMatchObject({ width: 240, height: 320 });
  });

  it('refuses bytes that are not a JPEG or PNG frame with invalid_media', async () => {
    expect(frameFormat(Buffer.from('GIF89a'))).toBeNull();
    await expect(decodeFrame(Buffer.from('hello'))).rejects.toMatchObject({ code: 'invalid_media', status: 400 });
    const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
      .gif()
      .toBuffer();
    await expect(decodeFrame(gif)).rejects.toMatchObject({ code: 'invalid_media' });
  });
});

describe('decision engine', () => {
  const engine = createDecisionEngine({ readLines: async () => ['GATE 4', 'Departures'] });

  it('answers each question in its type, and reads words only through the OCR port', async () => {
    const questions: DecisionQuestion[] = [
      { id: 'level', question: 'How bright is it?', type: 'integer', min: 0, max: 10 },
      { id: 'dark', question: 'Is it dark?', type: 'boolean' },
      { id: 'colour', question: 'What colour dominates?', type: 'enum', options: ['red', 'blue', 'yellow'] },
      { id: 'any_colour', question: 'What is the main colour?', type: 'string' },
      { id: 'gate', question: "Does the sign say 'gate 4'?", type: 'boolean' },
      { id: 'read', question: 'Read the text', type: 'string' },
      { id: 'moved', question: 'How much changed since the previous frame?', type: 'integer' },
      { id: 'smile', question: 'Is anyone smiling?', type: 'boolean' },
    ];
    const plan = engine.plan(questions);
    expect(plan.unanswerable.map((u) => u.id)).toEqual(['smile']);
    expect(engine.usesOcr(plan.local)).toBe(true);
    const memory = { previous: null };
    const blue = await engine.decide(await solidFrame('#2040e0', 'png'), plan.local, memory);
    expect(blue).toEqual({
      level: expect.any(Number) as number,
      dark: true,
      colour: 'blue',
      any_colour: 'blue',
      gate: true,
      read: 'GATE 4\nDepartures',
      moved: null,
    });
    expect(blue.level).toBeGreaterThanOrEqual(2);
    expect(blue.level).toBeLessThanOrEqual(4);
    const block = await engine.decide(await blockFrame(), plan.local, memory);
    expect(block.moved).toBeGreaterThan(90);
    const again = await engine.decide(await blockFrame(), plan.local, memory);
    expect(again.moved).toBe(0);
  });
});
