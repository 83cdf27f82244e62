/**
 * Skills, agent executions, SKILL.md resources and built-in skill prompts over `/mcp`, with the MCP SDK client
 * against the running app: the skills round trip (upload → create → lookup → download → update) equal to the REST
 * bodies, execute_agent with the deterministic planner equal to the REST execution, progress and cancellation of a
 * run, the anonymous rules, resources/list + resources/read of SKILL.md, prompts/list + prompts/get.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { zipFiles } from '../../../src/services/skills/skill-pack';
import { skillMd } from '../../helpers/crafted-zip';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { connectMcp, toolError, toolOutput } from '../../helpers/mcp-client';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';

/** Every toolset: this suite exercises every tool (mcp-toolsets.test.ts covers the default list). */
const ALL = { toolsets: 'all' };

const BUILTINS = ['bank-statement', 'identity-document', 'invoice', 'meeting-audio-notes', 'receipt', 'video-summary'];

const RECEIPT_SCHEMA = {
  type: 'object',
  properties: {
    company: { type: ['string', 'null'], description: 'the issuing business as printed' },
    total: { type: ['string', 'number', 'null'], description: 'the final amount paid' },
  },
  required: ['company', 'total'],
};

const bundle = (name: string, body: string, description: string) =>
  zipFiles([
    { path: 'SKILL.md', data: Buffer.from(skillMd(name, description, body)) },
    { path: 'schema.json', data: Buffer.from('{"type":"object","properties":{"total":{"type":["number","null"]}}}') },
  ]);

// OCR runs on the embedded engine; on a shared, loaded machine one run can take well over the default 30 s.
jest.setTimeout(120_000);

describe('/mcp skills, agents, resources and prompts', () => {
  let app: TestApp;
  let key: string;
  let client: Client;
  let anonymous: Client;
  let receiptUrl: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('mcp-skills', 'pro');
    await app.container.services.accounts.addCredits('mcp-skills', 5);
    client = await connectMcp(app.url, `Bearer ${key}`, ALL);
    anonymous = await connectMcp(app.url, 'Bearer prism', ALL);
    receiptUrl = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
  });
  afterAll(async () => {
    await client.close();
    await anonymous.close();
    await app.close();
  });

  const callTool = (c: Client, name: string, args: Record<string, unknown>) =>
    c.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const rest = async (p: string, init: { json?: unknown; method?: string } = {}) =>
    (await call(`${app.url}${p}`, { key, ...init })).json();
  const upload = async (zip: Buffer) =>
    String(toolOutput(await callTool(client, 'upload_file', { data: zip.toString('base64'), filename: 's.zip' })).id);

  it('lists the skills and agent tools with honest annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of [
      'list_skills',
      'lookup_skill',
      'get_skill',
      'download_skill',
      'get_execution',
      'list_executions',
    ]) {
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    for (const name of ['create_skill', 'update_skill', 'execute_agent']) {
      expect(byName.get(name)?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
      });
    }
    expect(byName.get('execute_agent')?.annotations?.openWorldHint).toBe(true);
    expect(Object.keys(byName.get('create_skill')?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['file_id', 'prompt', 'json_schema', 'session_id', 'name', 'description']),
    );
    expect(Object.keys(byName.get('execute_agent')?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['inputs', 'config', 'batch', 'model']),
    );
  });

  it('round-trips a skill: create → lookup → get → list → download → update, each equal to REST', async () => {
    const zip1 = await bundle('mcp-totals', 'Read the total.', 'Totals over MCP.');
    const v1 = toolOutput(await callTool(client, 'create_skill', { file_id: await upload(zip1) }));
    expect(v1).toMatchObject({
      object: 'skill',
      name: 'mcp-totals',
      description: 'Totals over MCP.',
      is_public: false,
    });
    expect(await rest(`/v1/skills/${String(v1.id)}`)).toEqual(v1);

    const looked = toolOutput(await callTool(client, 'lookup_skill', { name: 'mcp-totals' }));
    expect(looked).toEqual(v1);
    expect(await rest('/v1/skills/lookup', { method: 'POST', json: { name: 'mcp-totals' } })).toEqual(looked);
    expect(toolOutput(await callTool(client, 'get_skill', { skill_id: v1.id }))).toEqual(v1);

    const listed = toolOutput(await callTool(client, 'list_skills', { grouped: true, order_by: 'name', limit: 1000 }));
    expect(listed.items).toEqual(await rest('/v1/skills?grouped=true&order_by=name&limit=1000'));
    expect((listed.items as { name: string }[]).map((s) => s.name)).toEqual(
      expect.arrayContaining([...BUILTINS, 'mcp-totals']),
    );

    const download = await callTool(client, 'download_skill', { skill_id: v1.id, expires: 600 });
    const link = toolOutput(download);
    expect(link.expires_in).toBe(600);
    expect(String(link.download_url)).toContain(`${app.url}/v1/skills/`);
    const attached = download.content[1];
    if (attached?.type !== 'resource' || !('blob' in attached.resource)) throw new Error('no embedded zip');
    expect(attached.resource.mimeType).toBe('application/zip');
    expect(Buffer.from(attached.resource.blob, 'base64').equals(zip1)).toBe(true);
    const fetched = await fetch(String(link.download_url));
    expect(Buffer.from(await fetched.arrayBuffer()).equals(zip1)).toBe(true);
    const linkOnly = await callTool(client, 'download_skill', { skill_id: v1.id, include_zip: false });
    expect(linkOnly.content).toHaveLength(1);

    const zip2 = await bundle('mcp-totals', 'Read the total and the tax.', 'Second version.');
    const v2 = toolOutput(await callTool(client, 'update_skill', { skill_id: v1.id, file_id: await upload(zip2) }));
    expect(v2).toMatchObject({ name: 'mcp-totals', description: 'Second version.' });
    expect(v2.id).not.toBe(v1.id);
    expect(toolOutput(await callTool(client, 'lookup_skill', { name: 'mcp-totals' })).id).toBe(v2.id);
    const old = await callTool(client, 'lookup_skill', { name: 'mcp-totals', skill_version: v1.skill_version });
    expect(toolOutput(old).id).toBe(v1.id);
  });

  it('returns skill caller errors with the spec codes', async () => {
    expect(toolError(await callTool(client, 'lookup_skill', {}))).toMatchObject({ status: 422 });
    expect(toolError(await callTool(client, 'get_skill', { skill_id: 'no-such-skill' }))).toMatchObject({
      code: 'skill_not_found',
    });
    const twoSources = toolError(await callTool(client, 'create_skill', { prompt: 'x', file_id: 'file-1' }));
    expect(twoSources).toMatchObject({ code: 'invalid_skill_source' });
    const receipt = toolOutput(await callTool(client, 'lookup_skill', { name: 'receipt' }));
    const zip = await bundle('receipt', 'Mine now.', 'Not allowed.');
    const publicUpdate = toolError(
      await callTool(client, 'update_skill', { skill_id: receipt.id, file_id: await upload(zip) }),
    );
    expect(publicUpdate).toMatchObject({ status: 403 });
  });

  it('lets anonymous callers list and look up public skills only, and refuses their writes', async () => {
    const mine = toolOutput(await callTool(client, 'lookup_skill', { name: 'mcp-totals' }));
    const listed = toolOutput(await callTool(anonymous, 'list_skills', { limit: 1000 }));
    const items = listed.items as { name: string; is_public: boolean }[];
    expect(items.every((s) => s.is_public)).toBe(true);
    expect(items.map((s) => s.name).sort()).toEqual(BUILTINS);
    expect(toolOutput(await callTool(anonymous, 'lookup_skill', { name: 'invoice' }))).toMatchObject({
      name: 'invoice',
      is_public: true,
    });
    expect(toolError(await callTool(anonymous, 'lookup_skill', { id: mine.id }))).toMatchObject({
      code: 'skill_not_found',
    });
    for (const [name, args] of [
      ['create_skill', { prompt: 'Extract the total of a receipt' }],
      ['update_skill', { skill_id: mine.id, file_id: 'file-1' }],
      ['execute_agent', { inputs: { receipt: receiptUrl } }],
      ['list_executions', {}],
    ] as const) {
      const refused = toolError(await callTool(anonymous, name, args));
      expect(refused).toMatchObject({ code: 'missing_api_key', type: 'authentication_error', status: 401 });
      expect(String(refused.message)).toMatch(/needs a Prism account/);
    }
  });

  it('runs execute_agent with the deterministic planner to the same execution as REST, with progress', async () => {
    const body = {
      inputs: { receipt: { type: 'image_url', image_url: { url: receiptUrl } } },
      config: { prompt: 'Extract the receipt fields', json_schema: RECEIPT_SCHEMA },
    };
    const seen: { progress: number; message?: string | undefined }[] = [];
    const result = (await client.callTool({ name: 'execute_agent', arguments: body }, undefined, {
      onprogress: (p) => seen.push(p),
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
    const execution = toolOutput(result);
    expect(execution).toMatchObject({ status: 'completed', execution_mode: 'agent' });
    expect(String((execution.response as Record<string, unknown>).company)).toMatch(/GREENLEAF/);

    // The structured content is the REST record of the same execution.
    expect(await rest(`/v1/agent/executions/${String(execution.id)}`)).toEqual(execution);
    // And a REST execution of the same body gives the same answer.
    const viaRest = (await rest('/v1/agent/execute', { method: 'POST', json: body })) as Record<string, unknown>;
    expect(viaRest.response).toEqual(execution.response);
    const usage = (e: Record<string, unknown>) => ({ ...(e.usage as object), duration_seconds: 0 });
    expect(usage(viaRest)).toEqual(usage(execution));
    // Steps differ only in timings and the ids of the stored inputs: compare what ran.
    const ran = (e: Record<string, unknown>) => (e.steps as { kind: string; name: string }[]).map((s) => s.name);
    expect(ran(viaRest)).toEqual(ran(execution));
    expect({ ...viaRest, id: 0, created_at: 0, completed_at: 0, usage: 0, steps: 0 }).toEqual({
      ...execution,
      id: 0,
      created_at: 0,
      completed_at: 0,
      usage: 0,
      steps: 0,
    });

    // One notification per plan or tool step, naming the step (plus a 'working' heartbeat every 10 s of a slow
    // step), all growing.
    for (let i = 1; i < seen.length; i += 1) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    const steps = seen.filter((p) => p.message !== 'working');
    expect(steps.length).toBe((execution.usage as { steps: number }).steps);
    expect(steps.map((p) => String(p.message).split(' ')[0])).toEqual(['plan', 'tool', 'plan', 'tool', 'plan']);
    expect(steps.map((p) => p.message)).toEqual(expect.arrayContaining(['tool ocr_image', 'tool fill_json_schema']));

    const got = toolOutput(await callTool(client, 'get_execution', { id: execution.id }));
    expect(got).toEqual(execution);
    const listed = toolOutput(await callTool(client, 'list_executions', { limit: 2 }));
    expect(listed.items).toEqual(await rest('/v1/agent/executions?limit=2'));
    expect((listed.items as { id: string }[]).map((e) => e.id)).toEqual([viaRest.id, execution.id]);
    expect(toolError(await callTool(client, 'get_execution', { id: 'nope' }))).toMatchObject({
      code: 'execution_not_found',
    });
  });

  it('runs a built-in skill by name with run_skill from the default tool list, as execute_agent with the skill', async () => {
    const lean = await connectMcp(app.url, `Bearer ${key}`);
    try {
      const listed = (await lean.listTools()).tools.map((t) => t.name);
      expect(listed).toEqual(expect.arrayContaining(['run_skill', 'execute_agent', 'get_execution']));
      expect(listed).not.toContain('resume_execution');
      const seen: unknown[] = [];
      const result = (await lean.callTool(
        { name: 'run_skill', arguments: { skill: 'receipt', urls: [receiptUrl] } },
        undefined,
        {
          onprogress: (p) => seen.push(p),
          resetTimeoutOnProgress: true,
        },
      )) as CallToolResult;
      const execution = toolOutput(result);
      expect(execution.status).toBe('completed');
      expect(seen.length).toBeGreaterThan(0);
      // The answer follows the skill's schema.json.
      const schema = JSON.parse(
        fs.readFileSync(path.join(app.container.config.skills.builtinDir, 'receipt', 'schema.json'), 'utf8'),
      ) as { properties: Record<string, unknown> };
      const response = execution.response as Record<string, unknown>;
      expect(Object.keys(response).every((k) => k in schema.properties)).toBe(true);
      expect(JSON.stringify(response)).toMatch(/GREENLEAF/);
      // It is an ordinary execution: get_execution and REST see the same record.
      expect(toolOutput(await callTool(lean, 'get_execution', { id: execution.id }))).toEqual(execution);
      expect(await rest(`/v1/agent/executions/${String(execution.id)}`)).toEqual(execution);
      // An unknown skill is the spec's error, naming it; nothing runs.
      const missing = toolError(await callTool(lean, 'run_skill', { skill: 'no-such-skill', urls: [receiptUrl] }));
      expect(missing.code).toBe('skill_not_found');
      // execute_agent lists a lean body but checks the whole REST body: a bad REST-only field is refused (422, as
      // POST /v1/agent/execute answers it).
      const bad = toolError(await callTool(lean, 'execute_agent', { inputs: {}, config: { mode: 'nope' } }));
      expect(bad).toMatchObject({ status: 422, type: 'validation_error' });
    } finally {
      await lean.close();
    }
  });

  it('cancels the run when the client cancels execute_agent', async () => {
    const controller = new AbortController();
    const body = {
      inputs: { receipt: receiptUrl },
      config: { prompt: 'Extract the receipt fields', json_schema: RECEIPT_SCHEMA },
    };
    const pending = client.callTool({ name: 'execute_agent', arguments: body }, undefined, {
      signal: controller.signal,
      // The first step is the planner's; the OCR tool runs next, and the cancel arrives while it does.
      onprogress: () => controller.abort('enough'),
    });
    await expect(pending).rejects.toThrow();
    let newest: Record<string, unknown> = {};
    for (let i = 0; i < 200; i += 1) {
      newest = (
        toolOutput(await callTool(client, 'list_executions', { limit: 1 })).items as Record<string, unknown>[]
      )[0]!;
      if (newest.status === 'completed' || newest.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(newest).toMatchObject({ status: 'failed', response: null });
    expect((newest.usage as { message: string }).message).toMatch(/cancelled/);
  });

  it('lists each visible skill’s SKILL.md as a resource and reads it', async () => {
    const { resources } = await client.listResources();
    const skillMds = resources.filter((r) => r.uri.startsWith('prism://skills/'));
    const mine = toolOutput(await callTool(client, 'lookup_skill', { name: 'mcp-totals' }));
    const mineUri = `prism://skills/${String(mine.id)}/${String(mine.skill_version)}/SKILL.md`;
    expect(skillMds.map((r) => r.uri)).toContain(mineUri);
    expect(skillMds).toHaveLength(BUILTINS.length + 1);
    expect(resources.map((r) => r.uri)).toContain('hub://domains/document.invoice/schema');

    const read = await client.readResource({ uri: mineUri });
    const [content] = read.contents;
    expect(content?.mimeType).toBe('text/markdown');
    expect(content && 'text' in content ? content.text : '').toBe(
      skillMd('mcp-totals', 'Second version.', 'Read the total and the tax.'),
    );

    const receipt = skillMds.find((r) => r.name.startsWith('receipt@'));
    const builtin = await anonymous.readResource({ uri: String(receipt?.uri) });
    const text = builtin.contents[0] && 'text' in builtin.contents[0] ? builtin.contents[0].text : '';
    expect(text).toBe(
      fs.readFileSync(path.join(app.container.config.skills.builtinDir, 'receipt', 'SKILL.md'), 'utf8'),
    );

    // Anonymous callers see the public ones only, and cannot read an organisation's.
    const anonymousList = (await anonymous.listResources()).resources.filter((r) =>
      r.uri.startsWith('prism://skills/'),
    );
    expect(anonymousList).toHaveLength(BUILTINS.length);
    await expect(anonymous.readResource({ uri: mineUri })).rejects.toThrow(/not found/i);
    const wrongVersion = `prism://skills/${String(mine.id)}/20000101-00000000/SKILL.md`;
    await expect(client.readResource({ uri: wrongVersion })).rejects.toThrow(/not found/i);
  });

  it('offers one prompt per built-in skill, with the skill’s inputs as arguments', async () => {
    const { prompts } = await anonymous.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(BUILTINS);
    const receipt = prompts.find((p) => p.name === 'receipt');
    expect(receipt?.description).toMatch(/receipt/);
    expect(receipt?.arguments?.map((a) => [a.name, a.required ?? false])).toEqual([
      ['image', false],
      ['document', false],
    ]);
    expect(prompts.find((p) => p.name === 'video-summary')?.arguments?.map((a) => a.name)).toEqual(['video']);

    const got = await anonymous.getPrompt({ name: 'receipt', arguments: { image: 'https://example.com/r.png' } });
    const [message] = got.messages;
    expect(message?.role).toBe('user');
    const text = message?.content.type === 'text' ? message.content.text : '';
    const skillFile = fs.readFileSync(path.join(app.container.config.skills.builtinDir, 'receipt', 'SKILL.md'), 'utf8');
    expect(text).toContain(skillFile.slice(skillFile.indexOf('# Receipt')).trim());
    expect(text).toContain('- image: https://example.com/r.png');
    expect(text).toContain('"skill_name":"receipt"');
    expect(text).toContain('"inputs":{"image":"https://example.com/r.png"}');

    const bare = await anonymous.getPrompt({ name: 'receipt' });
    const bareText = bare.messages[0]?.content.type === 'text' ? bare.messages[0].content.text : '';
    expect(bareText).toMatch(/Ask me for the image or document/);
    await expect(anonymous.getPrompt({ name: 'no-such-skill' })).rejects.toThrow();
  });
});
