/**
 * `prompt_name` for the local text embedder: the names the spec lists, the default, and what each one changes.
 *
 * Transformer embedders prepend an instruction ("query: …") that the network has learned to read. A bag of word
 * vectors cannot read an instruction, so here a prompt name selects a small, documented profile instead:
 *  - Query side (SearchQuery, QuestionAnswering, FactChecking, CodeRetrieval): question scaffolding ("what", "how",
 *    "which", "does", "please", "find", "code", …) is dropped before embedding, so a short question lands nearer
 *    the passages that answer it. Embed the passages with `Document` (or the default), as the spec's table says.
 *  - Document, Classification (default), Clustering, SentenceSimilarity: every word is kept; the three symmetric
 *    ones differ only in how much of the vector is semantic (GloVe) versus lexical (hashed n-grams):
 *    SentenceSimilarity leans semantic, Clustering leans lexical (groups by shared wording), the rest are balanced.
 * Query and document profiles share one blend, so their vectors are comparable. Mixing profiles still gives a
 * vector in the same space, slightly less precise — as the spec says of a wrong prefix.
 */
import { BadRequestError } from '../../domain/errors';

/** Prompt names the spec lists, plus `Document` (the passage side the retrieval rows "pair with"). */
export const PROMPT_NAMES = [
  'SearchQuery',
  'QuestionAnswering',
  'FactChecking',
  'CodeRetrieval',
  'Classification',
  'Clustering',
  'SentenceSimilarity',
  'Document',
] as const;
export type PromptName = (typeof PROMPT_NAMES)[number];

/** Used when the request has no `prompt_name`. */
export const DEFAULT_PROMPT_NAME: PromptName = 'Classification';

/** What a prompt name changes in the text embedder. */
export interface PromptProfile {
  /** Words (normalised) removed before embedding. */
  drop: ReadonlySet<string>;
  /** Part of the squared norm given to the GloVe block at 768 dims (the rest goes to the hashed bands). */
  semanticShare: number;
}

const QUESTION_WORDS = [
  'what',
  "what's",
  'which',
  'who',
  "who's",
  'whom',
  'whose',
  'when',
  'where',
  "where's",
  'why',
  'how',
  "how's",
  'do',
  'does',
  'did',
  'is',
  'are',
  'was',
  'were',
  'can',
  'could',
  'should',
  'would',
  'will',
  'please',
  'tell',
  'me',
  'explain',
  'find',
  'show',
  'give',
  'list',
  'search',
  'looking',
  'look',
  'i',
  'want',
  'need',
  'know',
];
const CLAIM_WORDS = ['true', 'false', 'claim', 'verify', 'fact', 'check', 'whether', 'really', 'actually'];
const CODE_WORDS = ['code', 'function', 'snippet', 'example', 'implement', 'implementation', 'write', 'method'];

const NONE = new Set<string>();
const QUERY = new Set(QUESTION_WORDS);
const BALANCED = 0.7;

const PROFILES: Record<PromptName, PromptProfile> = {
  SearchQuery: { drop: QUERY, semanticShare: BALANCED },
  QuestionAnswering: { drop: QUERY, semanticShare: BALANCED },
  FactChecking: { drop: new Set([...QUESTION_WORDS, ...CLAIM_WORDS]), semanticShare: BALANCED },
  CodeRetrieval: { drop: new Set([...QUESTION_WORDS, ...CODE_WORDS]), semanticShare: BALANCED },
  Document: { drop: NONE, semanticShare: BALANCED },
  Classification: { drop: NONE, semanticShare: BALANCED },
  Clustering: { drop: NONE, semanticShare: 0.5 },
  SentenceSimilarity: { drop: NONE, semanticShare: 0.85 },
};

/** Validates `prompt_name` (absent → {@link DEFAULT_PROMPT_NAME}). @throws BadRequestError (param `prompt_name`). */
export function resolvePromptName(name: string | null | undefined): PromptName {
  if (name === undefined || name === null) return DEFAULT_PROMPT_NAME;
  if ((PROMPT_NAMES as readonly string[]).includes(name)) return name as PromptName;
  throw new BadRequestError(
    `Unknown prompt_name '${name}'; use one of: ${PROMPT_NAMES.join(', ')}`,
    null,
    'prompt_name',
  );
}

/** The profile of a (validated) prompt name. */
export function promptProfile(name: PromptName): PromptProfile {
  return PROFILES[name];
}
