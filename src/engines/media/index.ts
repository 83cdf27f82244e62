/**
 * The local media engines' public surface, for the composition root and the services: video frames, scene cuts and
 * OCR layout; audio metadata and speech segments; probing. Everything else in this folder is an implementation
 * detail.
 */
export { createAudioEngine, NO_TRANSCRIPT_MESSAGE, type AudioEngine, type AudioEngineOptions } from './audio.engine';
export {
  describeMediaTools,
  resolveMediaTools,
  type MediaTools,
  type MediaToolsOptions,
  type ToolOrigin,
} from './media-tools';
export { createProbeEngine, type ProbeEngine, type ProbeOptions } from './probe.engine';
export { SILERO_PACKAGES } from './silero-vad';
export { createVideoEngine, FRAME_SAMPLING, type VideoEngine, type VideoEngineOptions } from './video.engine';
export type * from './types';
