/**
 * probe_audio: what a recording is (duration, codec, channels) and where people speak (voice-activity segments).
 * It never invents words: without a speech-to-text model the transcript is null and says why.
 */
import { defineTool, z } from '../src/agents/sdk';
import { SOURCE_DESCRIPTION } from './lib/layout-output';

export const probeAudioTool = defineTool({
  name: 'probe_audio',
  description:
    'Inspect an audio recording (or the audio track of a video): duration, format, codec, channels, sample rate, ' +
    'and the time ranges that contain speech (voice-activity detection). It does not transcribe: transcript is ' +
    'always null and transcript_message says what would be needed.',
  inputSchema: z.object({ audio: z.string().min(1).describe(SOURCE_DESCRIPTION) }),
  outputSchema: z.object({
    duration_s: z.number().nullable(),
    format: z.string(),
    codec: z.string(),
    channels: z.number().int(),
    sample_rate: z.number().int(),
    vad: z.string(),
    speech_segments: z.array(z.object({ start_s: z.number(), end_s: z.number() })),
    speech_s: z.number(),
    transcript: z.null(),
    transcript_message: z.string(),
  }),
  annotations: { title: 'Probe audio', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ audio }, ctx) {
    const media = await ctx.media.load(audio);
    const facts = await ctx.vision.analyzeAudio(media.bytes);
    return {
      duration_s: facts.durationS,
      format: facts.format,
      codec: facts.codec,
      channels: facts.channels,
      sample_rate: facts.sampleRate,
      vad: facts.vad,
      speech_segments: facts.speechSegments.map((s) => ({ start_s: s.startS, end_s: s.endS })),
      speech_s: facts.speechS,
      transcript: null,
      transcript_message: facts.transcriptMessage,
    };
  },
});
