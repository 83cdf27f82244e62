/**
 * YAML from callers (a skill's SKILL.md front matter and prism.yaml), parsed within a budget.
 *
 * The `yaml` package checks duplicate map keys by comparing each new key with every earlier one, so N keys cost N²
 * (40,000 keys held the server for 12 s). Here the parser runs with that check off and with a byte cap, which makes
 * it linear and small; duplicates are then found with a set, nodes and nesting are counted on the parsed document
 * without recursion, and aliases are capped (a billion-laughs document is refused).
 *
 * Nesting is refused before the parser sees it: `yaml` recurses once per level, and a stack overflow inside it is
 * not just slow (16,000 `[` took 0.7 s) — V8 aborts the whole process when it then compiles a regular expression
 * near the stack limit. A linear pre-scan bounds flow nesting (`[`/`{`), indentation and compact indicators
 * (`- - - x`) per line, conservatively (brackets inside strings count too).
 */
import { spendWork } from './work-budget';
import { isAlias, isCollection, isMap, isScalar, parseDocument, type Node } from 'yaml';

export interface YamlLimits {
  /** Largest document, in UTF-8 bytes. */
  maxBytes: number;
  /** Most nodes (mappings, sequences, scalars, aliases) in the document. */
  maxNodes: number;
  /** Deepest nesting of mappings and sequences. */
  maxDepth: number;
}

const MAX_ALIASES = 10;
/** Columns of indentation a line may have (block nesting needs at least one per level). */
const MAX_INDENT = 128;
/** Compact indicators (`- `, `? `, `: `) starting one line. */
const COMPACT = /^[ \t]*((?:[-?:][ \t]+)*)/;

/** A document refused; `message` says why in the caller's terms. */
export class YamlBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YamlBudgetError';
  }
}

/**
 * Parses `text` as one YAML document to plain JS.
 * @throws YamlBudgetError for a document over the limits, with duplicate keys, or not YAML.
 */
export function parseBoundedYaml(text: string, limits: YamlLimits): unknown {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes) {
    throw new YamlBudgetError(`it is ${bytes} bytes, over the limit of ${limits.maxBytes}`);
  }
  spendWork('bytes', bytes);
  prescan(text, limits.maxDepth);
  let doc;
  try {
    doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false });
  } catch (error) {
    throw new YamlBudgetError(error instanceof RangeError ? 'it is nested too deeply' : firstLine(error));
  }
  const [problem] = doc.errors;
  if (problem) throw new YamlBudgetError(firstLine(problem));
  checkNodes(doc.contents, limits);
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    throw new YamlBudgetError(error instanceof RangeError ? 'it is nested too deeply' : firstLine(error));
  }
}

/** Refuses nesting the parser would recurse into too deeply, in one pass over the text. */
function prescan(text: string, maxDepth: number): void {
  let flow = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      flow += 1;
      if (flow > maxDepth) throw new YamlBudgetError(`it is nested more than ${maxDepth} levels deep ('[' or '{')`);
    } else if ((c === 0x5d || c === 0x7d) && flow > 0) {
      flow -= 1;
    }
  }
  for (const line of text.split('\n')) {
    const match = COMPACT.exec(line);
    const lead = match?.[0] ?? '';
    const indent = lead.length - lead.trimStart().length;
    if (indent > MAX_INDENT) throw new YamlBudgetError(`a line is indented more than ${MAX_INDENT} columns`);
    const indicators = (match?.[1] ?? '').replace(/[ \t]/g, '').length;
    if (indicators > maxDepth) {
      throw new YamlBudgetError(`a line nests more than ${maxDepth} compact collections ('- - …')`);
    }
  }
}

/** Counts nodes and depth and finds duplicate keys, iteratively (no recursion for a hostile depth to overflow). */
function checkNodes(root: Node | null, limits: YamlLimits): void {
  let count = 0;
  const stack: { node: unknown; depth: number }[] = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (node === null || node === undefined) continue;
    count += 1;
    if (count > limits.maxNodes) throw new YamlBudgetError(`it has more than ${limits.maxNodes} nodes`);
    if (depth > limits.maxDepth) throw new YamlBudgetError(`it is nested more than ${limits.maxDepth} levels deep`);
    if (isScalar(node) || isAlias(node) || !isCollection(node)) continue;
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? `s:${String(pair.key.value)}` : null;
        if (key !== null) {
          if (seen.has(key)) throw new YamlBudgetError(`map keys must be unique ('${keyText(pair.key)}' repeats)`);
          seen.add(key);
        } else if (pair.key !== null) {
          stack.push({ node: pair.key, depth: depth + 1 });
        }
        stack.push({ node: pair.value, depth: depth + 1 });
      }
    } else {
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 });
    }
  }
}

const keyText = (key: unknown): string => (isScalar(key) ? String(key.value).slice(0, 80) : '?');

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200) ?? 'not YAML';
}
