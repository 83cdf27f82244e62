/**
 * The questions the local decision engine can answer, and how a caller's free-text question is matched to one.
 *
 * Each kind names the measure it uses, the answer types it can give, and example prompts (published in the
 * session and at `GET /v1/compat/decisions`, so callers can see what is answered locally). A question matches the
 * first kind whose pattern it fits and whose answer types include the question's `type`; any other question is
 * not answerable locally and goes to an upstream vision model, or refuses the session.
 */

/** The typed answers a question can ask for. */
export const QUESTION_TYPES = ['boolean', 'enum', 'integer', 'number', 'string'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** One typed question, as validated at session creation. */
export interface DecisionQuestion {
  id: string;
  question: string;
  type: QuestionType;
  options?: string[] | undefined;
  min?: number | undefined;
  max?: number | undefined;
}

export type KindName =
  'text_contains' | 'text_read' | 'text_line_count' | 'text_present' | 'change' | 'dominant_colour' | 'brightness';

/** A question matched to a local kind, with what the pattern captured (the text to look for). */
export interface PlannedQuestion {
  question: DecisionQuestion;
  kind: KindName;
  /** `text_contains`: the quoted text; `brightness` booleans: `dark` or `bright`. */
  argument: string | null;
}

/** What the engine publishes about a kind. */
export interface KindDescription {
  kind: KindName;
  description: string;
  types: QuestionType[];
  prompts: string[];
  /** True when answering reads the words with OCR (slower: about a frame a second per OCR worker). */
  uses_ocr: boolean;
}

interface KindRule extends KindDescription {
  pattern: RegExp;
  argument?: (match: RegExpExecArray, question: string) => string | null;
}

const RULES: readonly KindRule[] = [
  {
    kind: 'text_contains',
    description: 'Whether the text read from the frame contains the quoted words (case and spacing ignored).',
    types: ['boolean'],
    prompts: ['Does the text contain "EXIT"?', "Does the sign say 'open'?"],
    uses_ocr: true,
    pattern: /\b(?:contains?|says?|includes?|mentions?|shows?|reads?)\b[^"'“‘«]*["'“‘«](.+?)["'”’»]/,
    argument: (m) => m[1] ?? null,
  },
  {
    kind: 'text_read',
    description: 'The text read from the frame, one line per line, in reading order ("" when there is none).',
    types: ['string'],
    prompts: ['Read the text.', 'What does the text say?', 'Transcribe the text.'],
    uses_ocr: true,
    pattern:
      /\b(?:read|transcribe)\b.*\b(?:text|words?|sign|label|screen)\b|\bwhat (?:does|do) the (?:text|sign|label|screen|words?) say\b|\bwhat text\b/,
  },
  {
    kind: 'text_line_count',
    description: 'How many lines of text the frame holds.',
    types: ['integer', 'number'],
    prompts: ['How many lines of text are there?', 'Count the text lines.'],
    uses_ocr: false,
    pattern: /\bhow many (?:lines|rows)\b|\bnumber of (?:text )?lines\b|\bcount (?:the )?(?:text )?lines\b/,
  },
  {
    kind: 'text_present',
    description: 'Whether the frame shows any text (a measure of letter-like strokes, no OCR).',
    types: ['boolean'],
    prompts: ['Is there text?', 'Does the frame contain any text?', 'Is any writing visible?'],
    uses_ocr: false,
    pattern:
      /\b(?:is|are) there (?:any )?(?:text|writing|words|letters)\b|\b(?:contain|have|has|show)s? (?:any )?(?:text|writing|words)\b|\bany (?:visible )?(?:text|writing)\b|\b(?:text|writing) (?:visible|present)\b/,
  },
  {
    kind: 'change',
    description:
      'How much of the frame changed since the previous frame of the session: number 0..1 (or min..max), integer percent, boolean over 5 %; null for the first frame.',
    types: ['number', 'integer', 'boolean'],
    prompts: ['How much changed since the previous frame?', 'Did anything change?', 'Is there motion?'],
    uses_ocr: false,
    pattern: /\bchang|\bmotion\b|\bmov(?:ed|ing|ement)\b|\bdiffer/,
  },
  {
    kind: 'dominant_colour',
    description: 'The colour covering most of the frame: one of the options (enum) or a colour name (string).',
    types: ['enum', 'string'],
    prompts: ['What is the dominant colour?', 'Which colour is the light?'],
    uses_ocr: false,
    pattern: /\bcolou?rs?\b/,
  },
  {
    kind: 'brightness',
    description:
      'Mean brightness: number 0..1 (or min..max), integer 0..100 (or min..max), boolean for "is it dark" (< 0.4) or "is it bright" (>= 0.6), enum options ordered darkest first.',
    types: ['number', 'integer', 'boolean', 'enum'],
    prompts: ['How bright is the frame?', 'Is it dark?', 'What is the brightness level?'],
    uses_ocr: false,
    pattern: /\b(?:bright|brightness|dark|darkness|dim|light level|luminance|lit)\b/,
    argument: (_m, question) => (/\b(?:dark|darkness|dim)\b/.test(question) ? 'dark' : 'bright'),
  },
];

/** The kinds, as published to callers. */
export const KIND_DESCRIPTIONS: readonly KindDescription[] = RULES.map(
  ({ kind, description, types, prompts, uses_ocr }) => ({ kind, description, types, prompts, uses_ocr }),
);

/** The local kind that answers `question`, or null when it must go elsewhere. */
export function matchKind(question: DecisionQuestion): PlannedQuestion | null {
  const text = question.question.toLowerCase().replace(/\s+/g, ' ').trim();
  for (const rule of RULES) {
    if (!rule.types.includes(question.type)) continue;
    const match = rule.pattern.exec(text);
    if (!match) continue;
    if (rule.kind === 'dominant_colour' && question.type === 'enum' && question.options === undefined) continue;
    // Keep the quoted words as the caller wrote them (the match ran on the lower-cased text).
    const original = rule.kind === 'text_contains' ? quoted(question.question) : null;
    return { question, kind: rule.kind, argument: original ?? rule.argument?.(match, text) ?? null };
  }
  return null;
}

function quoted(question: string): string | null {
  return /["'“‘«](.+?)["'”’»]/.exec(question)?.[1] ?? null;
}
