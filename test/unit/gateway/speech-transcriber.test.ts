/**
 * The transcription model's `verbose_json` reply as the timed text extraction and the agent tool return: segments in
 * time order with their text trimmed, the whole text as one segment when the server gives none, and a 502 for a
 * reply that is not a transcription.
 */
import { AppError } from '../../../src/domain/errors';
import { timedSpeech } from '../../../src/gateway/transcriptions/speech-transcriber';

const reply = (body: unknown) => Buffer.from(JSON.stringify(body));

describe('timedSpeech', () => {
  it('keeps the timed segments in order, trimmed', () => {
    const speech = timedSpeech(
      reply({
        text: ' one two ',
        segments: [
          { start: 2, end: 3, text: ' two' },
          { start: 0, end: 1.2, text: ' one ' },
          { start: 'x', end: 1, text: 'skipped: not timed' },
        ],
      }),
      'speaches',
      'whisper',
    );
    expect(speech).toEqual({
      text: 'one two',
      model: 'whisper',
      segments: [
        { startS: 0, endS: 1.2, text: 'one' },
        { startS: 2, endS: 3, text: 'two' },
      ],
    });
  });

  it('makes the whole text one segment over the duration when the server gives no segments', () => {
    expect(timedSpeech(reply({ text: 'hello', duration: 2.5 }), 'p', 'm').segments).toEqual([
      { startS: 0, endS: 2.5, text: 'hello' },
    ]);
    expect(timedSpeech(reply({ text: '' }), 'p', 'm').segments).toEqual([]);
  });

  it('answers 502 upstream_error for a reply that is not a transcription', () => {
    for (const body of [Buffer.from('not json'), reply({ segments: [] }), reply(null)]) {
      let caught: unknown;
      try {
        timedSpeech(body, 'speaches', 'whisper');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(AppError);
      expect((caught as AppError).status).toBe(502);
      expect((caught as AppError).message).toMatch(/^\[speaches\] /);
    }
  });
});
