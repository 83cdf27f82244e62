/**
 * transcribe_audio: what is said in a recording (or a video's audio track), in timed segments, on the models
 * file's transcription model. Without one it fails saying so; it never invents words (probe_audio still locates
 * the speech). Long recordings are sent in pieces and stitched (engines/local/speech-reader.ts); each call is billed
 * to the caller per started second at the model's price, and says so in `billed_seconds` and `cost_dollars`.
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
    billed_seconds: z.number().optional().describe('Seconds of audio billed for this call, when it was priced'),
    cost_dollars: z.number().optional().describe('What this call cost, when it was priced'),
  }),
  annotations: { title: 'Transcribe audio', readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  async handler({ audio }, ctx) {
    const media = await ctx.media.load(audio);
    const speech = await ctx.vision.transcribeSpeech(media);
    return {
      model: speech.model,
      text: speech.text,
      segments: speech.segments.map((s) => ({ start_s: s.startS, end_s: s.endS, text: s.text })),
      ...(speech.billed ? { billed_seconds: speech.billed.seconds, cost_dollars: speech.billed.costDollars } : {}),
    };
  },
});
