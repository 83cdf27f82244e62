/**
 * transcribe_audio: what is said in a recording (or a video's audio track), in timed segments, on the models
 * file's transcription model. Without one it fails saying so; it never invents words (probe_audio still locates
 * the speech).
 */
import { defineTool, z } from '../src/agents/sdk';
import { SOURCE_DESCRIPTION } from './lib/layout-output';

export const transcribeAudioTool = defineTool({
  name: 'transcribe_audio',
  description:
    'Transcribe the speech of an audio recording (or the audio track of a video) on the configured ' +
    'speech-to-text model: the full text and timed segments (start_s, end_s, text). Fails when the server has ' +
    'no transcription model.',
  inputSchema: z.object({ audio: z.string().min(1).describe(SOURCE_DESCRIPTION) }),
  outputSchema: z.object({
    model: z.string(),
    text: z.string(),
    segments: z.array(z.object({ start_s: z.number(), end_s: z.number(), text: z.string() })),
  }),
  annotations: { title: 'Transcribe audio', readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  async handler({ audio }, ctx) {
    const media = await ctx.media.load(audio);
    const speech = await ctx.vision.transcribeSpeech(media);
    return {
      model: speech.model,
      text: speech.text,
      segments: speech.segments.map((s) => ({ start_s: s.startS, end_s: s.endS, text: s.text })),
    };
  },
});
