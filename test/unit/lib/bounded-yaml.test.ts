import { parseBoundedYaml, YamlBudgetError, type YamlLimits } from '../../../src/lib/bounded-yaml';
import { parseStateDiagram } from '../../../src/services/skills/state-diagram';

const LIMITS: YamlLimits = { maxBytes: 64 * 1024, maxNodes: 500, maxDepth: 16 };

const refused = (text: string, limits = LIMITS): string => {
  try {
    parseBoundedYaml(text, limits);
  } catch (error) {
    expect(error).toBeInstanceOf(YamlBudgetError);
    return (error as Error).message;
  }
  throw new Error('was parsed');
};

describe('bounded YAML', () => {
  it('parses ordinary front matter', () => {
    expect(parseBoundedYaml('name: invoice\ndescription: "Reads: invoices"\nmetadata: {a: [1, 2]}\n', LIMITS)).toEqual({
      name: 'invoice',
      description: 'Reads: invoices',
      metadata: { a: [1, 2] },
    });
  });

  it('refuses what is over the byte, node or depth limit', () => {
    expect(refused('a: b\n'.repeat(20_000))).toMatch(/over the limit of 65536/);
    expect(refused(Array.from({ length: 600 }, (_, i) => `k${i}: v`).join('\n'))).toMatch(/more than 500 nodes/);
    expect(refused(`${'['.repeat(40)}1${']'.repeat(40)}`)).toMatch(/nested more than 16 levels/);
  });

  it('refuses duplicate keys (found with a set, not pairwise), aliases past the cap and text that is not YAML', () => {
    expect(refused('a: 1\nb: 2\na: 3\n')).toMatch(/map keys must be unique \('a' repeats\)/);
    const laughs = [
      'a: &a [x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) => `${'bcdefghi'[i]}: &${'bcdefghi'[i]} [*${'abcdefgh'[i]}, *${'abcdefgh'[i]}]`,
      ),
    ];
    expect(refused(laughs.join('\n'))).toMatch(/alias/i);
    expect(refused('a: [1\n')).not.toMatch(/\n/);
  });

  it('refuses nesting before the parser recurses into it (a stack overflow there can abort the process)', () => {
    const roomy = { maxBytes: 1 << 20, maxNodes: 1 << 20, maxDepth: 16 };
    expect(refused('['.repeat(50_000), roomy)).toMatch(/nested more than 16 levels deep \('\[' or '\{'\)/);
    expect(refused(`${'- '.repeat(20_000)}x`, roomy)).toMatch(/nests more than 16 compact collections/);
    expect(refused(`a:\n${' '.repeat(200)}b: 1`, roomy)).toMatch(/indented more than 128 columns/);
    expect(parseBoundedYaml('graph: |\n  [*] --> A\n  A --> [*]\n', roomy)).toEqual({
      graph: '[*] --> A\nA --> [*]\n',
    });
  });
});

describe('skill graph bounds', () => {
  const chain = (n: number): string =>
    [
      'stateDiagram-v2',
      '[*] --> S0',
      ...Array.from({ length: n - 1 }, (_, i) => `S${i} --> S${i + 1}`),
      `S${n - 1} --> [*]`,
    ].join('\n');

  it('reads a linear graph in order', () => {
    expect(parseStateDiagram(chain(5)).states).toEqual(['S0', 'S1', 'S2', 'S3', 'S4']);
  });

  it('refuses more than 200 states and more than 2000 lines', () => {
    expect(() => parseStateDiagram(chain(201))).toThrow('more than 200 states');
    expect(() => parseStateDiagram(`${chain(3)}\n${'S0: described\n'.repeat(2100)}`)).toThrow('more than 2000 lines');
  });
});
