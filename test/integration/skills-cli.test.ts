/**
 * `prism skills pack|push|list` as a user runs them beside a running server: pack applies the server's checks
 * (a bad folder fails before any upload), push stores a version the server then serves, list shows it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { skillMd } from '../helpers/crafted-zip';
import { call, databaseEnvFor, startTestApp, type TestApp } from '../helpers/test-app';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'prism.js');

function prism(dataDir: string, cwd: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...databaseEnvFor(dataDir), PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  const lines = result.stdout.trim().split('\n');
  return { status: result.status, stderr: result.stderr, last: lines[lines.length - 1] ?? '' };
}

describe('prism skills CLI', () => {
  let dataDir: string;
  let work: string;
  let app: TestApp;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-skills-cli-'));
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-skills-work-'));
    app = await startTestApp({}, dataDir);
    const folder = path.join(work, 'expense-report');
    fs.mkdirSync(path.join(folder, 'scripts'), { recursive: true });
    fs.writeFileSync(path.join(folder, 'SKILL.md'), skillMd('expense-report', 'Read expense reports.'));
    fs.writeFileSync(path.join(folder, 'schema.json'), '{"type":"object","properties":{"total":{"type":"number"}}}');
    fs.writeFileSync(path.join(folder, 'scripts', 'sum.py'), 'print(sum([1, 2]))\n');
    fs.writeFileSync(path.join(folder, '.DS_Store'), 'hidden');
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('packs a folder reproducibly and refuses a bad one with the entry and the rule', () => {
    const packed = prism(dataDir, work, 'skills', 'pack', 'expense-report');
    expect(packed.status).toBe(0);
    expect(packed.last).toBe(path.join(work, 'expense-report.zip'));
    expect(packed.stderr).toContain('expense-report: 3 files');
    const again = prism(dataDir, work, 'skills', 'pack', 'expense-report', '-o', 'copy.zip');
    expect(fs.readFileSync(path.join(work, 'copy.zip')).equals(fs.readFileSync(packed.last))).toBe(true);
    expect(again.status).toBe(0);

    const bad = path.join(work, 'bad-skill');
    fs.mkdirSync(bad);
    fs.writeFileSync(path.join(bad, 'SKILL.md'), skillMd('bad-skill'));
    fs.writeFileSync(path.join(bad, 'schema.json'), '{"type": 5}');
    const refused = prism(dataDir, work, 'skills', 'pack', 'bad-skill');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("entry 'schema.json' (invalid_schema)");
    expect(fs.existsSync(path.join(work, 'bad-skill.zip'))).toBe(false);
    expect(prism(dataDir, work, 'skills', 'pack').status).toBe(2);
  });

  it('pushes a folder or a zip for an organisation, which the server then serves; lists it', async () => {
    const key = await app.createKey('cli-org', 'pro');
    const pushed = prism(dataDir, work, 'skills', 'push', 'expense-report', '--org', 'cli-org');
    expect(pushed.status).toBe(0);
    const skill = JSON.parse(pushed.last) as { id: string; name: string; skill_version: string };
    expect(skill.name).toBe('expense-report');
    const fromZip = prism(dataDir, work, 'skills', 'push', 'expense-report.zip', '--org', 'cli-org');
    expect((JSON.parse(fromZip.last) as { id: string }).id).toBe(skill.id);

    const served = await call(`${app.url}/v1/skills/${skill.id}`, { key });
    expect(served.status).toBe(200);
    const listed = prism(dataDir, work, 'skills', 'list', '--org', 'cli-org');
    const names = (JSON.parse(listed.last) as Array<{ name: string }>).map((s) => s.name);
    expect(names).toContain('expense-report');
    expect(names).toContain('receipt');
    const publicOnly = JSON.parse(prism(dataDir, work, 'skills', 'list').last) as Array<{ name: string }>;
    expect(publicOnly.map((s) => s.name)).not.toContain('expense-report');
    expect(prism(dataDir, work, 'skills', 'push', 'expense-report', '--org', 'nobody').status).toBe(2);
  });
});
