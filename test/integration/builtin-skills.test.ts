/**
 * Issue 32, item 6: every built-in skill passes its own schema on its sample input, so program mode can engage for
 * each. Each skill runs as an agent execution of `prism-orion-2` with no upstream model (the deterministic planner
 * reads the sample and fills the skill's `schema.json`); the response must validate against that schema with no
 * note of a mismatch, and a second run asking for `mode: "program"` replays the compiled program. When program mode
 * is asked for and cannot engage (a model other than `prism-orion-2`, no skill, no program yet), `usage.message`
 * says why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkAgainstSchema } from '../../src/lib/json-schema';
import { makeSpeechLike, makeVideo } from '../helpers/media-clips';
import { makeTextPdf, renderReceiptImage, renderTextImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface ExecutionWire {
  id: string;
  status: string;
  execution_mode: string;
  response: Record<string, unknown> | null;
  usage: { message: string | null; steps: number };
}

const SKILLS_DIR = path.join(__dirname, '..', '..', 'skills');

/** The sample input of each built-in skill: the kind of file its SKILL.md says it reads. */
const SAMPLES: Record<string, () => Promise<{ bytes: Buffer; filename: string }>> = {
  receipt: async () => ({ bytes: renderReceiptImage(), filename: 'receipt.png' }),
  invoice: async () => ({
    bytes: await makeTextPdf([
      [
        'ACME SUPPLIES LTD',
        '1 Market Street, Leeds',
        'Invoice Number: INV-2024-0042',
        'Invoice Date: 2024-05-02',
        'Due Date: 2024-06-01',
        'Bill To: Northwind Traders',
        'Subtotal: 1,000.00',
        'VAT: 250.00',
        'Total Due: 1,250.00',
      ],
    ]),
    filename: 'invoice.pdf',
  }),
  'bank-statement': async () => ({
    bytes: await makeTextPdf([
      [
        'NORTHERN BANK PLC',
        'Account Holder: Jane Smith',
        'Account Number: 12345678',
        'Statement Period: 01/04/2025 - 30/04/2025',
        'Opening Balance: 1,200.00',
        '03/04/2025 Grocery Store 45.20',
        '10/04/2025 Salary 2,500.00',
        'Closing Balance: 3,654.80',
      ],
    ]),
    filename: 'statement.pdf',
  }),
  'identity-document': async () => ({
    bytes: renderTextImage(
      [
        'NATIONAL IDENTITY CARD',
        'Surname: SMITH',
        'Given Names: JANE MARY',
        'Date of Birth: 12/07/1985',
        'Nationality: BRITISH',
        'Document No: 123456789',
        'Date of Issue: 01/02/2020',
        'Date of Expiry: 01/02/2030',
      ],
      { width: 1000, height: 700, fontSize: 34, lineHeight: 66, margin: 60 },
    ),
    filename: 'id.png',
  }),
  'meeting-audio-notes': async () => ({
    bytes: await makeSpeechLike(
      4,
      [
        [0.5, 1.5],
        [2.2, 3.4],
      ],
      { container: 'wav' },
    ),
    filename: 'meeting.wav',
  }),
  'video-summary': async () => ({
    bytes: await makeVideo(
      [
        { durationS: 2, color: 'white', text: ['QUARTERLY REPORT'] },
        { durationS: 2, color: 'white', text: ['REVENUE UP 12 PERCENT'] },
      ],
      { width: 640, height: 360 },
    ),
    filename: 'clip.mp4',
  }),
};

describe('built-in skills on their sample inputs', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('builtin-skills');
    await app.container.services.accounts.addCredits('builtin-skills', 1);
  });
  afterAll(() => app.close());

  const execute = async (body: unknown): Promise<ExecutionWire> => {
    const res = await call(`${app.url}/v1/agent/execute`, { key, json: body });
    expect(res.status).toBe(200);
    return (await res.json()) as ExecutionWire;
  };
  const upload = async (skill: string): Promise<string> => {
    const sample = await (SAMPLES[skill] as () => Promise<{ bytes: Buffer; filename: string }>)();
    const res = await uploadFile(app.url, key, sample.bytes, { filename: sample.filename });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const runSkill = (skill: string, fileId: string, extra: Record<string, unknown> = {}) =>
    execute({
      model: 'prism-orion-2',
      inputs: { sample: { type: 'input_file', file_id: fileId } },
      config: { skills: [{ type: 'skill_reference', skill_id: skill, skill_version: 'latest' }], ...extra },
    });

  it('has a sample for every built-in skill folder', () => {
    const folders = fs
      .readdirSync(SKILLS_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(Object.keys(SAMPLES).sort()).toEqual(folders.sort());
  });

  it.each(Object.keys(SAMPLES))(
    '%s: the response passes the skill’s own schema, and program mode then replays it',
    async (skill) => {
      const schema = JSON.parse(fs.readFileSync(path.join(SKILLS_DIR, skill, 'schema.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      const fileId = await upload(skill);
      const first = await runSkill(skill, fileId);
      expect(first.status).toBe('completed');
      expect(first.execution_mode).toBe('agent');
      expect(first.usage.message ?? '').not.toMatch(/does not fully match the schema/);
      expect(checkAgainstSchema(schema, first.response)).toEqual({ valid: true, errors: [] });

      const replay = await runSkill(skill, fileId, { mode: 'program' });
      expect(replay).toMatchObject({ status: 'completed', execution_mode: 'program' });
      expect(replay.response).toEqual(first.response);
      expect(replay.usage.message).toMatch(/Replayed the compiled program/);
    },
    120_000,
  );

  it('says why program mode did not engage', async () => {
    const fileId = await upload('receipt');
    const onOrion1 = await execute({
      model: 'prism-orion-1',
      inputs: { sample: { type: 'input_file', file_id: fileId } },
      config: { mode: 'program', skills: [{ type: 'skill_reference', skill_id: 'receipt' }] },
    });
    expect(onOrion1.execution_mode).toBe('agent');
    expect(onOrion1.usage.message).toMatch(/Program mode did not engage: program mode runs only on prism-orion-2/);

    const noSkill = await execute({
      model: 'prism-orion-2',
      inputs: { sample: { type: 'input_file', file_id: fileId } },
      config: { mode: 'program', json_schema: { type: 'object', properties: { total: { type: ['number', 'null'] } } } },
    });
    expect(noSkill.execution_mode).toBe('agent');
    expect(noSkill.usage.message).toMatch(/Program mode did not engage: .*no skill/);

    // A fresh input signature has no compiled program yet: the run says so, then compiles one for the next run.
    const other = await uploadFile(app.url, key, await makeTextPdf([['GREENLEAF GROCERY LTD', 'TOTAL 26.22']]), {
      filename: 'receipt.pdf',
    });
    const otherId = ((await other.json()) as { id: string }).id;
    const first = await runSkill('receipt', otherId, { mode: 'program' });
    expect(first.execution_mode).toBe('agent');
    expect(first.usage.message).toMatch(/Program mode did not engage: no verified program/);
  });
});
