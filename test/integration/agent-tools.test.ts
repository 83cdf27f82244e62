/**
 * The tool registry as the agent loop and MCP see it: real tools on the real app's services (uploaded files,
 * artifacts in SQLite and the blob store, the embedded OCR engine), selected by exact name.
 */
import { renderReceiptImage } from '../helpers/media-fixtures';
import { failure } from '../helpers/app-error';
import { startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import type { Principal } from '../../src/domain/account';

describe('agent tools', () => {
  let app: TestApp;
  let principal: Principal;
  let otherOrg: Principal;
  let fileId: string;

  beforeAll(async () => {
    app = await startTestApp();
    const key = await app.createKey('tools-org');
    const other = await app.createKey('tools-other-org');
    const auth = app.container.services.auth;
    principal = await auth.authenticate(`Bearer ${key}`, { clientIp: '127.0.0.1', surface: 'main' });
    otherOrg = await auth.authenticate(`Bearer ${other}`, { clientIp: '127.0.0.1', surface: 'main' });
    const uploaded = await uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' });
    fileId = ((await uploaded.json()) as { id: string }).id;
  });
  afterAll(() => app.close());

  it('lists snake_case tools whose names are their function names, with JSON-schema parameters', () => {
    const { tools } = app.container.agents;
    const names = tools.list().map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['ocr_image', 'lookup_hub_domain']));
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
    const [spec] = tools.specs(tools.select(['ocr_image']));
    expect(spec?.parameters).toMatchObject({ type: 'object', required: ['image'] });
  });

  it('selects by exact name and refuses unknown names with a 400 naming them', async () => {
    const { tools } = app.container.agents;
    expect(tools.select(['lookup_hub_domain', 'ocr_image']).map((t) => t.name)).toEqual([
      'lookup_hub_domain',
      'ocr_image',
    ]);
    const error = await failure(() => tools.select(['ocr_image', 'OCR_Image', 'teleport']));
    expect(error.status).toBe(400);
    expect(error.code).toBe('unknown_tool');
    expect(error.param).toBe('config.tools');
    expect(error.message).toContain("'OCR_Image', 'teleport'");
  });

  it('ocr_image reads an uploaded receipt and keeps its layout as an artifact of the execution', async () => {
    const { tools, toolContext } = app.container.agents;
    const ctx = toolContext.create(principal, { executionId: 'exec-test-1' });
    const out = (await tools.invoke('ocr_image', { image: fileId }, ctx)) as {
      layout_id: string;
      page: { text: string; lines: unknown[] };
    };
    expect(out.page.text).toContain('GREENLEAF GROCERY');
    expect(out.page.text).toMatch(/TOTAL\s+26\.22/);
    expect(out.layout_id).toMatch(/^lay_[a-z0-9]{6}$/);
    const listed = await ctx.artifacts.list();
    expect(listed.map((a) => a.objectId)).toEqual([out.layout_id]);
    const layout = JSON.parse((await ctx.artifacts.read(out.layout_id)).bytes.toString()) as { pages: unknown[] };
    expect(layout.pages).toHaveLength(1);

    // Another organisation can neither load the file nor read the artifact.
    const foreign = toolContext.create(otherOrg, { executionId: 'exec-test-1' });
    expect((await failure(tools.invoke('ocr_image', { image: fileId }, foreign))).code).toBe('file_not_found');
    expect((await failure(foreign.artifacts.read(out.layout_id))).code).toBe('artifact_not_found');
  });

  it('checks arguments against the input schema before running', async () => {
    const { tools, toolContext } = app.container.agents;
    const error = await failure(tools.invoke('ocr_image', { picture: 'x' }, toolContext.create(principal)));
    expect(error.code).toBe('invalid_tool_input');
    expect(error.message).toContain('image');
  });

  it('lookup_hub_domain returns a schema, or suggestions for an unknown id', async () => {
    const { tools, toolContext } = app.container.agents;
    const ctx = toolContext.create(principal);
    const found = await tools.invoke('lookup_hub_domain', { domain: 'document.invoice' }, ctx);
    expect(found).toMatchObject({ found: true, domain: 'document.invoice' });
    expect(found.json_schema).toMatchObject({ type: 'object' });
    const missing = await tools.invoke('lookup_hub_domain', { domain: 'receipt' }, ctx);
    expect(missing.found).toBe(false);
    expect(missing.suggestions).toContain('document.receipt');
  });
});
