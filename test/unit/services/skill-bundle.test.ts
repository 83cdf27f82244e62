/**
 * The skill bundle reader and parser: every refusal of the Skills issue on a crafted zip, with the entry and rule
 * named, and the parsed view of a complete bundle (front matter, schemas, prism.yaml with its graph order).
 */
import zlib from 'node:zlib';
import { InvalidSkillBundleError } from '../../../src/domain/errors';
import { DEFAULT_BUNDLE_LIMITS, readSkillBundle } from '../../../src/services/skills/skill-bundle';
import { zipFiles } from '../../../src/services/skills/skill-pack';
import { parseSkillZip, skillVersionOf } from '../../../src/services/skills/skill-view';
import { parseStateDiagram } from '../../../src/services/skills/state-diagram';
import { craftZip, skillMd, type CraftedEntry } from '../../helpers/crafted-zip';

const MIB = 1024 * 1024;

async function refusal(zip: Buffer, limits = DEFAULT_BUNDLE_LIMITS): Promise<InvalidSkillBundleError> {
  try {
    await parseSkillZip(zip, limits);
  } catch (error) {
    if (error instanceof InvalidSkillBundleError) return error;
    throw error;
  }
  throw new Error('the bundle was accepted');
}

const withSkill = (...entries: CraftedEntry[]): Buffer =>
  craftZip([{ name: 'SKILL.md', data: skillMd('demo') }, ...entries]);

describe('skill bundle refusals', () => {
  const cases: Array<[string, () => Buffer, InvalidSkillBundleError['rule'], string | null]> = [
    [
      'a .. segment',
      () => withSkill({ name: 'resources/../../evil.sh', data: 'x' }),
      'path_traversal',
      'resources/../../evil.sh',
    ],
    ['a leading ..', () => withSkill({ name: '../evil', data: 'x' }), 'path_traversal', '../evil'],
    ['an absolute path', () => withSkill({ name: '/etc/passwd', data: 'x' }), 'absolute_path', '/etc/passwd'],
    ['a drive path', () => withSkill({ name: 'C:/Windows/evil', data: 'x' }), 'absolute_path', 'C:/Windows/evil'],
    ['a backslash .. path', () => withSkill({ name: 'a\\..\\..\\x', data: 'x' }), 'path_traversal', 'a\\..\\..\\x'],
    ['a symlink', () => withSkill({ name: 'link', data: '/etc/passwd', unixMode: 0o120777 }), 'symlink', 'link'],
    [
      'an encrypted entry',
      () => withSkill({ name: 'secret.txt', data: 'x', encrypted: true }),
      'encrypted',
      'secret.txt',
    ],
    [
      'a duplicate name',
      () => withSkill({ name: 'a.txt', data: '1' }, { name: 'a.txt', data: '2' }),
      'duplicate_name',
      'a.txt',
    ],
    [
      'a duplicate after normalising',
      () => withSkill({ name: 'a.txt', data: '1' }, { name: './a.txt', data: '2' }),
      'duplicate_name',
      'a.txt',
    ],
    ['no SKILL.md', () => craftZip([{ name: 'README.md', data: 'hi' }]), 'missing_skill_md', 'SKILL.md'],
    [
      'SKILL.md without front matter',
      () => craftZip([{ name: 'SKILL.md', data: '# Just markdown' }]),
      'invalid_skill_md',
      'SKILL.md',
    ],
    [
      'unparsable front matter',
      () => craftZip([{ name: 'SKILL.md', data: '---\nname: [unclosed\n---\nbody' }]),
      'invalid_skill_md',
      'SKILL.md',
    ],
    [
      'front matter without name',
      () => craftZip([{ name: 'SKILL.md', data: '---\ndescription: d\n---\nbody' }]),
      'invalid_front_matter',
      'SKILL.md',
    ],
    [
      'front matter without description',
      () => craftZip([{ name: 'SKILL.md', data: '---\nname: demo\n---\nbody' }]),
      'invalid_front_matter',
      'SKILL.md',
    ],
    [
      'an upper-case name',
      () => craftZip([{ name: 'SKILL.md', data: skillMd('Demo_Skill') }]),
      'invalid_front_matter',
      'SKILL.md',
    ],
    [
      'schema.json that is not JSON',
      () => withSkill({ name: 'schema.json', data: '{oops' }),
      'invalid_schema',
      'schema.json',
    ],
    [
      'schema.json that is not a schema',
      () => withSkill({ name: 'schema.json', data: '{"type": 12}' }),
      'invalid_schema',
      'schema.json',
    ],
    [
      'schemas/<type>.json that is not a schema',
      () => withSkill({ name: 'schemas/invoice.json', data: '[1]' }),
      'invalid_schema',
      'schemas/invoice.json',
    ],
    [
      'prism.yaml with a wrong apiVersion',
      () => withSkill({ name: 'prism.yaml', data: 'apiVersion: v9\n' }),
      'invalid_prism_yaml',
      'prism.yaml',
    ],
    [
      'prism.yaml that is not YAML',
      () => withSkill({ name: 'prism.yaml', data: 'a: [1\n' }),
      'invalid_prism_yaml',
      'prism.yaml',
    ],
    [
      'prism.yaml with a graph that is not a state diagram',
      () => withSkill({ name: 'prism.yaml', data: 'apiVersion: prism/v1alpha\ngraph: "flowchart LR"\n' }),
      'invalid_prism_yaml',
      'prism.yaml',
    ],
    [
      'prism.yaml with toolsets that are not a list',
      () => withSkill({ name: 'prism.yaml', data: 'apiVersion: prism/v1alpha\ntoolsets: core\n' }),
      'invalid_prism_yaml',
      'prism.yaml',
    ],
    ['bytes that are not a zip', () => Buffer.from('definitely not a zip'), 'not_a_zip', null],
  ];
  it.each(cases)('refuses %s', async (_label, make, rule, entry) => {
    const error = await refusal(make());
    expect(error.rule).toBe(rule);
    expect(error.entry).toBe(entry);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_skill_bundle');
    if (entry !== null) expect(error.message).toContain(entry);
  });

  it('refuses more entries than allowed (the default is 1,000)', async () => {
    const files = Array.from({ length: 1001 }, (_, i) => ({ name: `r/${i}.txt`, data: `${i}` }));
    const error = await refusal(withSkill(...files));
    expect(error.rule).toBe('too_many_entries');
    expect((await refusal(withSkill(...files.slice(0, 5)), { ...DEFAULT_BUNDLE_LIMITS, maxEntries: 3 })).rule).toBe(
      'too_many_entries',
    );
  });

  it('refuses an entry over 10 MiB and a total over 50 MiB (declared sizes)', async () => {
    const big = { name: 'big.bin', data: Buffer.alloc(10 * MIB + 1, 7), method: 'store' as const };
    const tooBig = await refusal(withSkill(big));
    expect([tooBig.rule, tooBig.entry]).toEqual(['entry_too_large', 'big.bin']);
    const parts = Array.from({ length: 6 }, (_, i) => ({
      name: `p${i}.bin`,
      data: Buffer.alloc(9 * MIB, i),
      method: 'store' as const,
    }));
    const total = await refusal(withSkill(...parts));
    expect([total.rule, total.entry]).toEqual(['total_too_large', 'p5.bin']);
  });

  it('refuses a header that understates the size (the inflated stream is counted)', async () => {
    const liar = withSkill({ name: 'liar.bin', data: Buffer.alloc(200_000, 1), declaredSize: 1000 });
    const error = await refusal(liar);
    expect(error.entry).toBe('liar.bin');
    expect(error.rule).toBe('not_a_zip');
    const overLimit = await refusal(liar, { ...DEFAULT_BUNDLE_LIMITS, maxEntryBytes: 150_000, maxRatio: 1e9 });
    expect(['entry_too_large', 'not_a_zip']).toContain(overLimit.rule);
  });

  it('refuses a compression ratio over 100 and accepts small repetitive files', async () => {
    const bomb = withSkill({ name: 'zeros.bin', data: Buffer.alloc(2 * MIB) });
    const error = await refusal(bomb);
    expect([error.rule, error.entry]).toEqual(['compression_ratio', 'zeros.bin']);
    expect(error.message).toMatch(/ratio \d+:1/);
    await expect(
      parseSkillZip(withSkill({ name: 'spaces.txt', data: ' '.repeat(8000) }), DEFAULT_BUNDLE_LIMITS),
    ).resolves.toBeDefined();
  });
});

describe('skill bundle parsing', () => {
  const graph = [
    'stateDiagram-v2',
    '  Classify: pick the document type',
    '  [*] --> Classify',
    '  Classify --> Extract',
    '  Extract --> Validate : fields',
    '  Validate --> [*]',
  ].join('\n');
  const complete = async () =>
    zipFiles([
      { path: 'SKILL.md', data: Buffer.from(skillMd('invoice-parsing', 'Parse invoices.', '# Steps\nRead totals.')) },
      {
        path: 'schema.json',
        data: Buffer.from(JSON.stringify({ type: 'object', properties: { total: { type: 'number' } } })),
      },
      { path: 'schemas/receipt.json', data: Buffer.from('{"type":"object"}') },
      {
        path: 'prism.yaml',
        data: Buffer.from(
          `apiVersion: prism/v1alpha\nmetadata: {team: ops}\nmodel: prism-orion-1:fast\ntoolsets: [core, document]\ngraph: |\n${graph
            .split('\n')
            .map((l) => `  ${l}`)
            .join('\n')}\nplan: Read, then check.\n`,
        ),
      },
      { path: 'scripts/run.py', data: Buffer.from('print(1)') },
      { path: 'resources/example.txt', data: Buffer.from('example') },
    ]);

  it('reads front matter, instructions, schemas, config and the file list', async () => {
    const zip = await complete();
    const { sha256, content } = await parseSkillZip(zip, DEFAULT_BUNDLE_LIMITS);
    expect(sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(content).toMatchObject({
      name: 'invoice-parsing',
      description: 'Parse invoices.',
      frontMatter: { name: 'invoice-parsing', description: 'Parse invoices.' },
      instructions: '# Steps\nRead totals.',
      schema: { type: 'object' },
      schemas: { receipt: { type: 'object' } },
      config: {
        apiVersion: 'prism/v1alpha',
        metadata: { team: 'ops' },
        model: 'prism-orion-1:fast',
        toolsets: ['core', 'document'],
        graphStates: ['Classify', 'Extract', 'Validate'],
        plan: 'Read, then check.',
      },
    });
    expect(content.files.map((f) => f.path)).toEqual([
      'SKILL.md',
      'schema.json',
      'schemas/receipt.json',
      'prism.yaml',
      'scripts/run.py',
      'resources/example.txt',
    ]);
  });

  it("accepts the hosted platform's vlmrun.yaml and apiVersion, and a zipped folder", async () => {
    const zip = await zipFiles([
      { path: 'my-skill/SKILL.md', data: Buffer.from(skillMd('my-skill')) },
      {
        path: 'my-skill/vlmrun.yaml',
        data: Buffer.from('apiVersion: vlm.run/v1alpha\nmodel: vlmrun-orion-1:auto\ntoolsets: [core]\n'),
      },
    ]);
    const { content } = await parseSkillZip(zip, DEFAULT_BUNDLE_LIMITS);
    expect(content.config).toMatchObject({ apiVersion: 'vlm.run/v1alpha', graph: null, graphStates: [] });
    expect(content.files.map((f) => f.path)).toEqual(['SKILL.md', 'vlmrun.yaml']);
  });

  it('packs the same folder content to the same bytes', async () => {
    const [a, b] = await Promise.all([complete(), complete()]);
    expect(a.equals(b)).toBe(true);
  });

  it('checks every entry but keeps only the bytes asked for', async () => {
    const entries = await readSkillBundle(await complete(), DEFAULT_BUNDLE_LIMITS, (p) => p === 'scripts/run.py');
    expect(entries.find((e) => e.path === 'scripts/run.py')?.data.toString()).toBe('print(1)');
    expect(entries.find((e) => e.path === 'SKILL.md')).toMatchObject({ data: Buffer.alloc(0) });
  });

  it('writes versions as YYYYMMDD-<8 hex> in UTC', () => {
    expect(skillVersionOf(new Date('2026-07-20T23:59:59Z'), 'b19b53d9'.padEnd(64, '0'))).toBe('20260720-b19b53d9');
  });

  it('uses deflate on a packed zip', async () => {
    const zip = await zipFiles([{ path: 'SKILL.md', data: Buffer.from(skillMd('x').repeat(50)) }]);
    expect(zip.length).toBeLessThan(zlib.deflateRawSync(Buffer.from(skillMd('x').repeat(50))).length + 200);
  });
});

describe('state diagrams', () => {
  it('orders states from [*] to [*] breadth-first in declaration order', () => {
    const diagram = parseStateDiagram(
      [
        'stateDiagram-v2',
        '  %% a comment',
        '  direction LR',
        '  state "Read the document" as Read',
        '  [*] --> Read',
        '  Read --> Invoice : invoice',
        '  Read --> Receipt : receipt',
        '  Invoice --> Check',
        '  Receipt --> Check',
        '  Check --> [*]',
        '  Orphan --> Check',
      ].join('\n'),
    );
    expect(diagram.states).toEqual(['Read', 'Invoice', 'Receipt', 'Check']);
    expect(diagram.descriptions).toEqual({ Read: 'Read the document' });
    expect(diagram.transitions[1]).toEqual({ from: 'Read', to: 'Invoice', label: 'invoice' });
  });

  it('refuses diagrams without a start, without a reachable end, or with unknown lines', () => {
    expect(() => parseStateDiagram('stateDiagram-v2\n A --> [*]')).toThrow(/no start/);
    expect(() => parseStateDiagram('stateDiagram-v2\n [*] --> A\n B --> [*]')).toThrow(/no end/);
    expect(() => parseStateDiagram('stateDiagram-v2\n [*] --> A\n A --> [*]\n A -> B')).toThrow(/cannot read/);
    expect(() => parseStateDiagram('graph TD')).toThrow(/stateDiagram-v2/);
  });
});
