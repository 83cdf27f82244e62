/**
 * Reads the Mermaid `stateDiagram-v2` of a skill's `prism.yaml` (`graph`) into the order the agent loop follows.
 *
 * Only what skill graphs use is understood: `[*] --> A`, `A --> B`, `A --> B : label`, `A: description`,
 * `state "Long name" as A`, comments (`%%`), `direction`, notes and composite-state braces (ignored). The states are
 * listed breadth-first from `[*]` in declaration order, so a linear graph yields its path and a branching one each
 * state once, before the states it leads to.
 *
 * Bounded: at most {@link MAX_GRAPH_LINES} lines and {@link MAX_GRAPH_STATES} states (each state becomes
 * a sub-goal of the agent loop, so a graph of thousands is not a plan), and the walk is linear in the transitions.
 */

export interface StateDiagram {
  /** States reachable from `[*]`, in the order the loop follows them. */
  states: string[];
  /** Descriptions given as `State: description`. */
  descriptions: Record<string, string>;
  transitions: Array<{ from: string; to: string; label: string | null }>;
}

const START_END = '[*]';
/** Lines a graph may have (after blank lines and comments are dropped). */
export const MAX_GRAPH_LINES = 2000;
/** States a graph may name. */
export const MAX_GRAPH_STATES = 200;
const TRANSITION = /^(\[\*\]|[\w.-]+)\s*-->\s*(\[\*\]|[\w.-]+)\s*(?::\s*(.*))?$/;
const DESCRIPTION = /^([\w.-]+)\s*:\s*(.+)$/;
const ALIAS = /^state\s+"([^"]*)"\s+as\s+([\w.-]+)\s*\{?$/;

/**
 * Parses the diagram.
 * @throws Error with a readable reason when the text is not a state diagram with a start and a reachable end.
 */
export function parseStateDiagram(source: string): StateDiagram {
  const lines = source
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('%%'));
  if (lines[0] !== 'stateDiagram-v2' && lines[0] !== 'stateDiagram') {
    throw new Error("the graph must start with 'stateDiagram-v2'");
  }
  if (lines.length > MAX_GRAPH_LINES) throw new Error(`the graph has more than ${MAX_GRAPH_LINES} lines`);
  const named = new Set<string>();
  const name = (state: string): void => {
    named.add(state);
    if (named.size > MAX_GRAPH_STATES + 1) throw new Error(`the graph has more than ${MAX_GRAPH_STATES} states`);
  };
  const descriptions: Record<string, string> = {};
  const transitions: StateDiagram['transitions'] = [];
  let inNote = false;
  for (const line of lines.slice(1)) {
    if (inNote) {
      inNote = line !== 'end note';
      continue;
    }
    if (/^note\s/.test(line)) {
      inNote = !line.includes(':');
      continue;
    }
    if (line === '}' || line.startsWith('direction ') || /^state\s+[\w.-]+\s*(\{|<<\w+>>)?$/.test(line)) continue;
    const transition = TRANSITION.exec(line);
    if (transition) {
      transitions.push({ from: transition[1] ?? '', to: transition[2] ?? '', label: transition[3]?.trim() || null });
      name(transition[1] ?? '');
      name(transition[2] ?? '');
      continue;
    }
    const alias = ALIAS.exec(line);
    if (alias) {
      descriptions[alias[2] ?? ''] = alias[1] ?? '';
      continue;
    }
    const description = DESCRIPTION.exec(line);
    if (description) {
      descriptions[description[1] ?? ''] = (description[2] ?? '').trim();
      continue;
    }
    throw new Error(`cannot read graph line '${line.slice(0, 80)}'`);
  }
  if (!transitions.some((t) => t.from === START_END)) throw new Error("the graph has no start ('[*] --> State')");
  const states = walkFromStart(transitions);
  const reached = new Set(states);
  if (!transitions.some((t) => t.to === START_END && (reached.has(t.from) || t.from === START_END))) {
    throw new Error("no end ('State --> [*]') is reachable from the start");
  }
  return { states, descriptions, transitions };
}

/** Breadth-first from `[*]`, each transition looked at once (an index by source, not a scan per state). */
function walkFromStart(transitions: StateDiagram['transitions']): string[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of transitions) {
    const targets = next.get(from);
    if (targets) targets.push(to);
    else next.set(from, [to]);
  }
  const order: string[] = [];
  const seen = new Set<string>([START_END]);
  const queue = [START_END];
  for (let head = 0; head < queue.length; head += 1) {
    const current = queue[head] ?? START_END;
    for (const to of next.get(current) ?? []) {
      if (seen.has(to)) continue;
      seen.add(to);
      order.push(to);
      queue.push(to);
    }
  }
  return order;
}
