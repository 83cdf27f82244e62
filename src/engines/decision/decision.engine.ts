/**
 * The local decision engine: typed answers about one camera frame from measurements, with no neural model.
 *
 * `plan` matches a session's questions to the kinds it answers (question-kinds.ts) once, when the session is
 * created; `decide` then decodes each frame once (frame-pixels.ts), runs only the measures the plan needs, reads
 * the words with OCR only when a question needs them (once per frame however many ask), and shapes every answer
 * to its question's type and bounds. `memory` carries what the change measure compares against, per session.
 */
import { decodeFrame, type FramePixels } from './frame-pixels';
import {
  brightness,
  changedFraction,
  changeSignature,
  dominantColour,
  NAMED_COLOURS,
  textLineCount,
  type ChangeSignature,
} from './frame-measures';
import {
  KIND_DESCRIPTIONS,
  matchKind,
  type DecisionQuestion,
  type KindDescription,
  type PlannedQuestion,
} from './question-kinds';

export {
  KIND_DESCRIPTIONS,
  QUESTION_TYPES,
  type DecisionQuestion,
  type KindDescription,
  type PlannedQuestion,
  type QuestionType,
} from './question-kinds';

/** A typed answer; null when the frame cannot say (e.g. change on the first frame). */
export type Answer = boolean | number | string | null;

/** What one session remembers between frames (the previous frame's change signature). */
export interface FrameMemory {
  previous: ChangeSignature | null;
}

export interface DecisionPlan {
  local: PlannedQuestion[];
  /** Questions no local kind answers (they need an upstream vision model). */
  unanswerable: DecisionQuestion[];
}

export interface DecisionEngineDeps {
  /** Reads the text lines of an image (the OCR engine), in reading order. */
  readLines: (image: Buffer) => Promise<string[]>;
}

export interface DecisionEngine {
  /** The kinds of question answered locally, with example prompts. */
  readonly kinds: readonly KindDescription[];
  plan(questions: readonly DecisionQuestion[]): DecisionPlan;
  /** True when some planned question reads words (OCR), i.e. the frame will take far longer than a measure. */
  usesOcr(plan: readonly PlannedQuestion[]): boolean;
  /**
   * Decode `frame` and answer the planned questions. Updates `memory` for the next frame.
   * @throws 400 `invalid_media` when the frame is not a decodable JPEG or PNG.
   */
  decide(frame: Buffer, plan: readonly PlannedQuestion[], memory: FrameMemory | null): Promise<Record<string, Answer>>;
}

const CHANGED_ENOUGH = 0.05;
const DARK_BELOW = 0.4;
const BRIGHT_FROM = 0.6;

export function createDecisionEngine(deps: DecisionEngineDeps): DecisionEngine {
  const ocrKinds = new Set(KIND_DESCRIPTIONS.filter((k) => k.uses_ocr).map((k) => k.kind));
  return {
    kinds: KIND_DESCRIPTIONS,
    plan(questions) {
      const local: PlannedQuestion[] = [];
      const unanswerable: DecisionQuestion[] = [];
      for (const question of questions) {
        const planned = matchKind(question);
        if (planned) local.push(planned);
        else unanswerable.push(question);
      }
      return { local, unanswerable };
    },
    usesOcr: (plan) => plan.some((p) => ocrKinds.has(p.kind)),
    async decide(frame, plan, memory) {
      const pixels = await decodeFrame(frame);
      let lines: string[] | null = null;
      const readLines = async (): Promise<string[]> => (lines ??= await deps.readLines(frame));
      const needsChange = plan.some((p) => p.kind === 'change');
      const signature = needsChange ? changeSignature(pixels) : null;
      const changed = memory?.previous && signature ? changedFraction(memory.previous, signature) : null;
      if (memory && signature) memory.previous = signature;
      // Keyed by caller-chosen question ids: no prototype, so an id like `__proto__` is an ordinary key.
      const answers: Record<string, Answer> = Object.create(null) as Record<string, Answer>;
      let lineCount: number | null = null;
      for (const planned of plan) {
        const q = planned.question;
        switch (planned.kind) {
          case 'text_present':
            lineCount ??= textLineCount(pixels);
            answers[q.id] = lineCount > 0;
            break;
          case 'text_line_count':
            lineCount ??= textLineCount(pixels);
            answers[q.id] = clampToBounds(q, lineCount);
            break;
          case 'text_read':
            answers[q.id] = (await readLines()).join('\n');
            break;
          case 'text_contains':
            answers[q.id] = containsWords((await readLines()).join(' '), planned.argument ?? '');
            break;
          case 'change':
            answers[q.id] = changed === null ? null : scaled(q, changed, { integerMax: 100, flag: CHANGED_ENOUGH });
            break;
          case 'dominant_colour':
            answers[q.id] = dominantColour(pixels, q.options ?? Object.keys(NAMED_COLOURS).filter((c) => c !== 'gray'));
            break;
          case 'brightness':
            answers[q.id] = brightnessAnswer(planned, pixels);
            break;
        }
      }
      return answers;
    },
  };
}

function brightnessAnswer(planned: PlannedQuestion, pixels: FramePixels): Answer {
  const q = planned.question;
  const level = brightness(pixels);
  if (q.type === 'boolean') return planned.argument === 'dark' ? level < DARK_BELOW : level >= BRIGHT_FROM;
  if (q.type === 'enum') {
    const options = q.options ?? [];
    return options[Math.min(options.length - 1, Math.floor(level * options.length))] ?? null;
  }
  return scaled(q, level, { integerMax: 100, flag: BRIGHT_FROM });
}

/** A 0..1 measure as the question's type: number in [min,max] (default 0..1), integer in [min,max] (default 0..max). */
function scaled(q: DecisionQuestion, fraction: number, opts: { integerMax: number; flag: number }): Answer {
  if (q.type === 'boolean') return fraction > opts.flag;
  if (q.type === 'integer') {
    const lo = q.min ?? 0;
    const hi = q.max ?? opts.integerMax;
    return Math.round(lo + fraction * (hi - lo));
  }
  const lo = q.min ?? 0;
  const hi = q.max ?? 1;
  return Math.round((lo + fraction * (hi - lo)) * 1000) / 1000;
}

function clampToBounds(q: DecisionQuestion, value: number): number {
  return Math.min(q.max ?? Infinity, Math.max(q.min ?? -Infinity, value));
}

function containsWords(text: string, words: string): boolean {
  const normalise = (s: string): string => s.toLowerCase().replace(/\s+/g, ' ').trim();
  const needle = normalise(words);
  return needle.length > 0 && normalise(text).includes(needle);
}
