/**
 * `toolsets`, `config.mode` and `config.orchestration_mode` on executions (real-client-compat §3.6) are read, never
 * ignored: toolsets choose the tools the planning model is offered (core always on), an unknown toolset — or one
 * of the hosted platform's that Prism does not provide — is a 400 naming it (execute and agent create), and
 * `orchestration_mode: true` asks for program mode as `config.mode: "program"` does (and a named agent's own mode
 * applies when the request names none).
 */
import { craftZip, skillMd } from '../helpers/crafted-zip';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, uploadFile, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const SCHEMA = { type: 'object', properties: { company: { type: 'string' } }, required: ['company'] };
const NOTE = 'Delivery note\nCompany: GREENLEAF GROCERY LTD\nTotal: 42.50';

describe('toolsets and execution mode on executions', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([{ id: 'prism-orion-2', upstreamModel: 'planner', parameters: ['tools'] }]);
    ({ app, upstream } = lab);
    key = await app.createKey('toolsets-org');
    await app.container.services.accounts.addCredits('toolsets-org', 5);
  });
  afterAll(() => lab.close());

  const execute = (body: unknown) => call(`${app.url}/v1/agent/execute`, { key, json: body });
  const fillThenAnswer = () =>
    upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ name: 'fill_json_schema', arguments: JSON.stringify({ json_schema: SCHEMA, text: NOTE }) }],
      },
      { kind: 'reply', content: '{"company": "GREENLEAF GROCERY LTD"}' },
    );

  it('refuses an unknown toolset and one Prism does not provide, naming it', async () => {
    for (const [name, words] of [
      ['bogus', "Unknown toolset 'bogus'"],
      ['image-gen', "Toolset 'image-gen' (image generation) is not provided"],
    ] as const) {
      const res = await execute({ model: 'prism-orion-2', inputs: { note: NOTE }, toolsets: ['core', name] });
      expect(res.status).toBe(400);
      const { detail } = (await res.json()) as { detail: { error: { code: string; param: string; message: string } } };
      expect(detail.error).toMatchObject({ code: 'unknown_toolset', param: 'toolsets' });
      expect(detail.error.message).toContain(words);
    }
    const created = await call(`${app.url}/v1/agent/create`, {
      key,
      json: { name: 'sets', config: { prompt: 'Read it.' }, toolsets: ['viz'] },
    });
    expect(created.status).toBe(400);
    expect(((await created.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
      'unknown_toolset',
    );
  });

  it('offers the planning model only the tools of the named toolsets plus core', async () => {
    fillThenAnswer();
    const seen = upstream.requests.length;
    const res = await execute({
      model: 'prism-orion-2',
      inputs: { note: NOTE },
      config: { prompt: 'Who sent this note?', json_schema: SCHEMA },
      toolsets: ['document'],
    });
    const execution = (await res.json()) as { status: string; response: unknown };
    expect(execution).toMatchObject({ status: 'completed', response: { company: 'GREENLEAF GROCERY LTD' } });
    const first = upstream.requests[seen]?.body as { tools: { function: { name: string } }[] };
    expect(first.tools.map((t) => t.function.name).sort()).toEqual(
      [
        'fill_json_schema',
        'lookup_hub_domain',
        'read_artifact',
        'read_document',
        'read_skill_file',
        'render_page',
        'write_artifact',
      ].sort(),
    );
  });

  it('takes orchestration_mode: true as program mode, replaying with no model call', async () => {
    const zip = craftZip([{ name: 'SKILL.md', data: skillMd('toolset-notes') }]);
    const upload = await uploadFile(app.url, key, zip, { filename: 'skill.zip' });
    const zipId = ((await upload.json()) as { id: string }).id;
    expect((await call(`${app.url}/v1/skills/create`, { key, json: { file_id: zipId } })).status).toBe(201);
    const body = (config: Record<string, unknown>) => ({
      model: 'prism-orion-2',
      inputs: { note: { type: 'text', text: NOTE } },
      config: { json_schema: SCHEMA, skills: [{ type: 'skill_reference', skill_id: 'toolset-notes' }], ...config },
    });
    fillThenAnswer();
    const first = (await (await execute(body({ orchestration_mode: false }))).json()) as Record<string, unknown>;
    expect(first).toMatchObject({ status: 'completed', execution_mode: 'agent' });
    const seen = upstream.requests.length;
    const replay = (await (await execute(body({ orchestration_mode: true }))).json()) as Record<string, unknown>;
    expect(replay).toMatchObject({
      status: 'completed',
      execution_mode: 'program',
      response: { company: 'GREENLEAF GROCERY LTD' },
    });
    expect(upstream.requests.length).toBe(seen);

    // A named agent created with `mode: program` replays too when the execute request names no mode.
    const agent = await call(`${app.url}/v1/agent/create`, {
      key,
      json: {
        name: 'notes-agent',
        model: 'prism-orion-2',
        config: {
          json_schema: SCHEMA,
          skills: [{ type: 'skill_reference', skill_id: 'toolset-notes' }],
          mode: 'program',
        },
      },
    });
    expect(agent.status).toBe(200);
    const named = (await (
      await execute({ name: 'notes-agent', inputs: { note: { type: 'text', text: NOTE } } })
    ).json()) as Record<string, unknown>;
    expect(named).toMatchObject({ status: 'completed', execution_mode: 'program' });
    expect(String(named.name)).toMatch(/^notes-agent:/);
    expect(upstream.requests.length).toBe(seen);
  });
});
