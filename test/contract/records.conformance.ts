/**
 * The records conformance suite: behaviour every backend's prediction, execution, wallet-hold, feedback, artifact,
 * agent, program, chat, evaluation and MCP OAuth stores (and an organisation's key list) must show — organisation scoping, compare-and-set status changes,
 * progress that never overwrites a finished record, holds that never exceed the balance under concurrency, JSON
 * kept in the caller's key order. Run it for each backend with that backend's factory.
 */
import { randomUUID } from 'node:crypto';
import type { AgentRecord, Execution } from '../../src/domain/execution';
import type { EvaluationRun } from '../../src/domain/evaluation';
import { defaultPredictionRequest, EMPTY_USAGE, type Prediction } from '../../src/domain/prediction';
import type { StoredBytes } from '../../src/stores/types';
import type { OpenStores } from './store-backends';

const blob = (n: number): StoredBytes => ({ bytes: n, md5: 'b'.repeat(32), sha256: n.toString(16).padStart(64, 'c') });
const at = (ms: number): Date => new Date(Date.UTC(2026, 0, 1) + ms);

/** A JSON schema whose key order is not alphabetical (jsonb would reorder it: z, a, m -> a, m, z). */
const ORDERED_SCHEMA = { type: 'object', properties: { zeta: { type: 'string' }, alpha: { type: 'number' } } };

function prediction(orgId: string, overrides: Partial<Prediction> = {}): Prediction {
  return {
    id: randomUUID(),
    orgId,
    kind: 'document',
    model: 'prism-1',
    domain: 'document.invoice',
    status: 'pending',
    request: defaultPredictionRequest({ jsonSchema: ORDERED_SCHEMA }),
    inputs: [],
    response: null,
    usage: EMPTY_USAGE,
    errorMessage: null,
    callbackUrl: null,
    attempts: 0,
    createdAt: new Date(),
    completedAt: null,
    ...overrides,
  };
}

function execution(orgId: string, overrides: Partial<Execution> = {}): Execution {
  return {
    id: randomUUID(),
    orgId,
    agentId: null,
    name: 'adhoc',
    model: 'prism-orion-1',
    status: 'running',
    executionMode: 'agent',
    request: { inputs: [], config: {} } as unknown as Execution['request'],
    response: null,
    usage: { steps: 0 } as unknown as Execution['usage'],
    steps: [],
    errorMessage: null,
    callbackUrl: null,
    sessionId: null,
    attempts: 0,
    pause: null,
    createdAt: new Date(),
    completedAt: null,
    ...overrides,
  };
}

export function describeRecordsConformance(backend: string, open: () => Promise<OpenStores>): void {
  describe(`${backend} record stores`, () => {
    let s: OpenStores['stores'];
    let close: () => Promise<void>;
    let org: string;
    let other: string;
    beforeEach(async () => {
      ({ stores: s, close } = await open());
      org = (await s.accounts.createOrg({ name: 'acme', tier: 'pro', kind: 'standard' })).id;
      other = (await s.accounts.createOrg({ name: 'other', tier: 'free', kind: 'standard' })).id;
    });
    afterEach(() => close());

    describe('wallet holds', () => {
      it('never hold more than the balance, however many calls ask at once', async () => {
        await s.wallets.credit(org, 10_000, 'top up');
        const holds = await Promise.all(Array.from({ length: 40 }, () => s.wallets.hold(org, 1_000, 60_000)));
        expect(holds.filter((h) => h !== null)).toHaveLength(10);
        expect(await s.wallets.held(org)).toBe(10_000);
        expect(await s.wallets.hold(org, 1, 60_000)).toBeNull();
      });

      it('settle: debit the cost and give the hold back in one step; release is idempotent', async () => {
        await s.wallets.credit(org, 5_000, 'top up');
        const a = await s.wallets.hold(org, 3_000, 60_000);
        const b = await s.wallets.hold(org, 2_000, 60_000);
        expect(a && b).toBeTruthy();
        expect(await s.wallets.settle(a as string, org, 1_200, 'call a')).toBe(3_800);
        expect(await s.wallets.held(org)).toBe(2_000);
        await s.wallets.release(b as string);
        await s.wallets.release(b as string);
        expect(await s.wallets.held(org)).toBe(0);
        expect(await s.wallets.balance(org)).toBe(3_800);
        // A settled hold settles no second time: the debit happens, no hold is given back twice.
        expect(await s.wallets.settle(a as string, org, 800, 'late')).toBe(3_000);
        expect(await s.wallets.held(org)).toBe(0);
      });

      it('let a lapsed hold go, so a process that died does not keep the money', async () => {
        await s.wallets.credit(org, 1_000, 'top up');
        expect(await s.wallets.hold(org, 1_000, 1)).not.toBeNull();
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(await s.wallets.hold(org, 1_000, 60_000)).not.toBeNull();
      });
    });

    describe('predictions', () => {
      it('are scoped by organisation, listed newest first, and keep JSON in the caller key order', async () => {
        const first = prediction(org, {
          createdAt: at(1),
          inputs: [{ sha256: blob(1).sha256, contentType: 'a/b', filename: 'x' }],
        });
        const second = prediction(org, { createdAt: at(2), response: { zeta: 'z', alpha: 1 } });
        await s.predictions.insert(first, [blob(1)]);
        await s.predictions.insert(second, []);
        await s.predictions.insert(prediction(other), []);
        expect(await s.predictions.get(other, first.id)).toBeNull();
        const got = await s.predictions.get(org, second.id);
        expect(got).toMatchObject({ id: second.id, status: 'pending', createdAt: second.createdAt });
        expect(Object.keys(got?.response as object)).toEqual(['zeta', 'alpha']);
        expect(Object.keys(got?.request.jsonSchema?.properties ?? {})).toEqual(['zeta', 'alpha']);
        expect((await s.predictions.getById(first.id))?.inputs).toEqual(first.inputs);
        expect((await s.predictions.list(org, { skip: 0, limit: 10 })).map((p) => p.id)).toEqual([second.id, first.id]);
        expect(await s.files.referencedBlobs()).toContain(blob(1).sha256);
      });

      it('change status compare-and-set: of two runners only one moves a record', async () => {
        const p = prediction(org, { status: 'enqueued' });
        await s.predictions.insert(p, []);
        const moves = await Promise.all([
          s.predictions.transition(p.id, ['enqueued'], 'running', { attempts: 1 }),
          s.predictions.transition(p.id, ['enqueued'], 'running', { attempts: 1 }),
        ]);
        expect(moves.filter((m) => m !== null)).toHaveLength(1);
        expect((await s.predictions.unfinished()).map((u) => u.id)).toEqual([p.id]);
        const done = await s.predictions.transition(p.id, ['running'], 'completed', {
          response: { ok: true },
          completedAt: at(5),
        });
        expect(done).toMatchObject({ status: 'completed', response: { ok: true }, attempts: 1, completedAt: at(5) });
        expect(await s.predictions.transition(p.id, ['running'], 'failed')).toBeNull();
        expect(await s.predictions.unfinished()).toEqual([]);
        await s.predictions.recordDelivery({
          predictionId: p.id,
          url: 'https://example.test/h',
          attempt: 1,
          statusCode: 200,
          outcome: 'delivered',
          error: null,
          createdAt: at(6),
        });
        expect(await s.predictions.deliveries(p.id)).toEqual([
          expect.objectContaining({ attempt: 1, statusCode: 200, outcome: 'delivered', createdAt: at(6) }),
        ]);
      });
    });

    describe('executions', () => {
      it('never let a late progress write overwrite a finished record', async () => {
        const e = execution(org);
        await s.executions.insert(e);
        await s.executions.saveProgress(e.id, { steps: [{ index: 0 } as never] });
        expect((await s.executions.get(org, e.id))?.steps).toHaveLength(1);
        await s.executions.transition(e.id, ['running'], 'completed', {
          steps: [{ index: 0 } as never, { index: 1 } as never],
          response: { zeta: 1, alpha: 2 },
          completedAt: at(9),
        });
        await s.executions.saveProgress(e.id, { steps: [] });
        const done = await s.executions.get(org, e.id);
        expect(done?.steps).toHaveLength(2);
        expect(Object.keys(done?.response ?? {})).toEqual(['zeta', 'alpha']);
        expect(await s.executions.get(other, e.id)).toBeNull();
      });

      it('refuse the writes of a worker whose claim another worker took over', async () => {
        const e = execution(org, { status: 'enqueued' });
        await s.executions.insert(e);
        const stale = await s.executions.transition(e.id, ['enqueued'], 'running', { attempts: 1 });
        // Another worker takes the running record over: its claim is the next attempt.
        await s.executions.transition(e.id, ['running'], 'enqueued');
        const fresh = await s.executions.transition(e.id, ['enqueued'], 'running', { attempts: 2 });
        await s.executions.saveProgress(e.id, { steps: [{ index: 0 } as never] }, stale!.attempts);
        expect((await s.executions.get(org, e.id))?.steps).toEqual([]);
        const late = { response: { by: 'stale' }, completedAt: at(3) };
        expect(await s.executions.transition(e.id, ['running'], 'completed', late, stale!.attempts)).toBeNull();
        await s.executions.saveProgress(e.id, { steps: [{ index: 0 } as never] }, fresh!.attempts);
        const done = await s.executions.transition(
          e.id,
          ['running'],
          'completed',
          { response: { by: 'fresh' }, completedAt: at(4) },
          fresh!.attempts,
        );
        expect(done).toMatchObject({ status: 'completed', response: { by: 'fresh' }, attempts: 2 });
        expect(done?.steps).toHaveLength(1);

        const p = prediction(org, { status: 'enqueued' });
        await s.predictions.insert(p, []);
        await s.predictions.transition(p.id, ['enqueued'], 'running', { attempts: 1 });
        await s.predictions.transition(p.id, ['running'], 'enqueued');
        await s.predictions.transition(p.id, ['enqueued'], 'running', { attempts: 2 });
        expect(await s.predictions.transition(p.id, ['running'], 'failed', { errorMessage: 'late' }, 1)).toBeNull();
        expect(await s.predictions.transition(p.id, ['running'], 'completed', {}, 2)).toMatchObject({
          status: 'completed',
          errorMessage: null,
        });
      });

      it('tell running records nobody touched since a time from those their replica keeps alive', async () => {
        const alive = execution(org, { createdAt: at(1) });
        const silent = execution(org, { createdAt: at(2) });
        const finished = execution(org, { status: 'completed', createdAt: at(0), completedAt: at(0) });
        for (const e of [alive, silent, finished]) await s.executions.insert(e);
        const now = new Date();
        expect((await s.executions.stalled(now)).map((e) => e.id)).toEqual([alive.id, silent.id]);
        await s.executions.touch([alive.id, finished.id]);
        await s.executions.touch([]);
        expect((await s.executions.stalled(now)).map((e) => e.id)).toEqual([silent.id]);
        expect(await s.executions.stalled(at(0))).toEqual([]);
      });

      it('move status compare-and-set and list unfinished oldest first', async () => {
        const older = execution(org, { status: 'pending', createdAt: at(1) });
        const newer = execution(org, { status: 'enqueued', createdAt: at(2) });
        await s.executions.insert(older);
        await s.executions.insert(newer);
        expect((await s.executions.unfinished()).map((e) => e.id)).toEqual([older.id, newer.id]);
        expect((await s.executions.list(org, { skip: 0, limit: 5 })).map((e) => e.id)).toEqual([newer.id, older.id]);
        const moves = await Promise.all([
          s.executions.transition(newer.id, ['enqueued'], 'running'),
          s.executions.transition(newer.id, ['enqueued'], 'failed', { errorMessage: 'x' }),
        ]);
        expect(moves.filter((m) => m !== null)).toHaveLength(1);
        await expect(s.executions.transition(older.id, ['completed'], 'running')).rejects.toThrow(/illegal/);
      });

      it('keep what a paused run waits for, list paused runs, and clear the pause on resume', async () => {
        const e = execution(org);
        await s.executions.insert(e);
        const pause = {
          kind: 'tool_approval' as const,
          toolCall: { id: 'call_1', name: 'fetch_url', arguments: { url: 'https://example.com/a' } },
          question: null,
          goal: null,
          pausedAt: at(1).toISOString(),
          expiresAt: at(2).toISOString(),
        };
        const paused = await s.executions.transition(e.id, ['running'], 'paused', { pause });
        expect(paused).toMatchObject({ status: 'paused', pause });
        expect((await s.executions.get(org, e.id))?.pause).toEqual(pause);
        expect((await s.executions.paused()).map((x) => x.id)).toContain(e.id);
        // A paused run is not unfinished work for a restart to take over.
        expect((await s.executions.unfinished()).map((x) => x.id)).not.toContain(e.id);
        const resumed = await s.executions.transition(e.id, ['paused'], 'running', { pause: null });
        expect(resumed).toMatchObject({ status: 'running', pause: null });
        expect((await s.executions.paused()).map((x) => x.id)).not.toContain(e.id);
      });
    });

    it('feedback is listed per entity, newest first, within the organisation', async () => {
      for (const [i, notes] of ['first', 'second'].entries()) {
        await s.feedback.insert({
          id: randomUUID(),
          orgId: org,
          entityType: 'request',
          entityId: 'r1',
          response: { zeta: i, alpha: i },
          notes,
          createdAt: at(i),
        });
      }
      const listed = await s.feedback.list(org, { type: 'request', id: 'r1' }, { limit: 10, offset: 0 });
      expect(listed.map((f) => f.notes)).toEqual(['second', 'first']);
      expect(Object.keys(listed[0]?.response ?? {})).toEqual(['zeta', 'alpha']);
      expect(await s.feedback.list(other, { type: 'request', id: 'r1' }, { limit: 10, offset: 0 })).toEqual([]);
    });

    it('artifacts are scoped by organisation and execution, with a taken id refused', async () => {
      const artifact = (objectId: string, filename: string, ms: number) => ({
        objectId,
        orgId: org,
        executionId: 'exec-1',
        sessionId: null,
        kind: 'json' as never,
        filename,
        mimeType: 'application/json',
        sha256: blob(7).sha256,
        sizeBytes: 7,
        createdAt: at(ms),
      });
      expect(await s.artifacts.insert(artifact('a1', 'out.json', 1), blob(7))).toBe(true);
      expect(await s.artifacts.insert(artifact('a2', 'out.json', 2), blob(7))).toBe(true);
      expect(await s.artifacts.insert(artifact('a1', 'again.json', 3), blob(7))).toBe(false);
      expect((await s.artifacts.findByFilename(org, { executionId: 'exec-1' }, 'out.json'))?.objectId).toBe('a2');
      expect(
        (await s.artifacts.list(org, { executionId: 'exec-1' }, { offset: 0, limit: 5 })).map((a) => a.objectId),
      ).toEqual(['a1', 'a2']);
      expect(await s.artifacts.count(org, { executionId: 'exec-1' })).toBe(2);
      expect(await s.artifacts.count(org, {})).toBe(0);
      expect(await s.artifacts.get(other, 'a1')).toBeNull();
    });

    it('agents are unique per name and version, found by name, newest version and prompt; programs upsert', async () => {
      const agent = (version: string, ms: number): AgentRecord => ({
        id: randomUUID(),
        orgId: org,
        name: 'invoices',
        version,
        description: null,
        config: { prompt: `read ${version}`, jsonSchema: ORDERED_SCHEMA } as unknown as AgentRecord['config'],
        inputs: null,
        createdAt: at(ms),
      });
      const v1 = agent('1', 1);
      const v2 = agent('2', 2);
      expect(await s.agents.insert(v1)).toBe(true);
      expect(await s.agents.insert(v2)).toBe(true);
      expect(await s.agents.insert({ ...agent('1', 3) })).toBe(false);
      expect((await s.agents.findByName(org, 'invoices', null))?.id).toBe(v2.id);
      expect((await s.agents.findByName(org, 'invoices', '1'))?.id).toBe(v1.id);
      expect((await s.agents.findByPrompt(org, 'read 1'))?.id).toBe(v1.id);
      expect(Object.keys((await s.agents.get(org, v1.id))?.config.jsonSchema?.properties ?? {})).toEqual([
        'zeta',
        'alpha',
      ]);
      expect(await s.agents.get(other, v1.id)).toBeNull();
      expect((await s.agents.list(org)).map((a) => a.version)).toEqual(['2', '1']);

      const program = { skillId: 'sk', skillVersion: '1', signature: 'doc', sourceExecutionId: null, verifiedAt: null };
      await s.programs.put({ ...program, program: { steps: [1] } as never, createdAt: at(1) });
      await s.programs.put({ ...program, program: { steps: [2] } as never, createdAt: at(2), verifiedAt: at(3) });
      expect(await s.programs.get('sk', '1', 'doc')).toMatchObject({ program: { steps: [2] }, verifiedAt: at(3) });
      expect(await s.programs.get('sk', '2', 'doc')).toBeNull();
    });

    it('chat turns number messages in order, also when appended at once, and a taken session id is refused', async () => {
      const thread = {
        id: 'sess-1',
        orgId: org,
        ownerUserId: null,
        title: 't',
        model: 'prism-orion-1',
        isPublic: false,
        sessionTokenHash: null,
        messageCount: 0,
        createdAt: at(1),
        updatedAt: at(1),
      };
      const message = (content: string) => ({
        role: 'user' as const,
        content,
        attachments: [],
        meta: null,
        createdAt: at(2),
      });
      expect(await s.chats.appendTurn({ thread, create: true, messages: [message('m0')] })).toBe(true);
      expect(await s.chats.appendTurn({ thread, create: true, messages: [message('again')] })).toBe(false);
      await Promise.all(
        ['a', 'b', 'c', 'd'].map((c) =>
          s.chats.appendTurn({ thread, create: false, messages: [message(c), message(c)] }),
        ),
      );
      const messages = await s.chats.messages('sess-1');
      expect(messages.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      expect((await s.chats.getThread('sess-1'))?.messageCount).toBe(9);
      expect((await s.chats.listThreads(org, null, { skip: 0, limit: 5 })).map((t) => t.id)).toEqual(['sess-1']);
      expect(await s.chats.listThreads(other, null, { skip: 0, limit: 5 })).toEqual([]);
    });

    it('evaluation runs start and finish compare-and-set, and read a source with the newest feedback', async () => {
      const p = prediction(org, { status: 'completed', response: { total: 1 }, createdAt: at(1) });
      await s.predictions.insert(p, []);
      for (const [i, notes] of ['old', 'new'].entries()) {
        await s.feedback.insert({
          id: randomUUID(),
          orgId: org,
          entityType: 'request',
          entityId: p.id,
          response: { total: i },
          notes,
          createdAt: at(10 + i),
        });
      }
      const items = await s.evaluations.sourceItems(org, {
        sourceType: 'request_domain',
        sourceId: 'document.invoice',
        sourceVersion: null,
        dataFrom: null,
        dataTo: null,
        maxItems: 10,
      });
      expect(items).toEqual([
        expect.objectContaining({
          entityId: p.id,
          response: { total: 1 },
          feedback: { response: { total: 1 }, notes: 'new' },
        }),
      ]);
      const run: EvaluationRun = {
        id: randomUUID(),
        orgId: org,
        kind: 'run',
        parentId: null,
        sourceType: 'request_domain',
        sourceId: 'document.invoice',
        sourceLabel: 'document.invoice',
        sourceVersion: null,
        status: 'pending',
        config: {} as EvaluationRun['config'],
        accuracy: null,
        apiCompletionRate: null,
        totalItems: 0,
        totalWithFeedback: 0,
        dataFrom: null,
        dataTo: null,
        results: {},
        errorMessage: null,
        attempts: 0,
        createdAt: at(20),
        completedAt: null,
      };
      await s.evaluations.insert(run);
      expect(await s.evaluations.unfinished()).toHaveLength(1);
      // Each start counts (the restart policy gives up on a run started too often).
      expect(await s.evaluations.start(run.id)).toMatchObject({ status: 'running', attempts: 1 });
      expect(await s.evaluations.start(run.id)).toMatchObject({ status: 'running', attempts: 2 });
      const outcome = {
        status: 'completed' as const,
        accuracy: 0.5,
        apiCompletionRate: 1,
        totalItems: 1,
        totalWithFeedback: 1,
        dataFrom: at(1),
        dataTo: at(1),
        results: { score: 0.5 },
        errorMessage: null,
        completedAt: at(30),
      };
      const item = { position: 0, entityType: 'request' as const, entityId: p.id, detail: { ok: true } };
      expect(await s.evaluations.finish(run.id, outcome, [item])).toMatchObject({ status: 'completed', accuracy: 0.5 });
      expect(await s.evaluations.finish(run.id, outcome, [item])).toBeNull();
      expect(await s.evaluations.start(run.id)).toBeNull();
      expect(await s.evaluations.items(org, run.id, { offset: 0, limit: 5 })).toEqual([item]);
      expect(await s.evaluations.items(other, run.id, { offset: 0, limit: 5 })).toEqual([]);
      expect(
        await s.evaluations.list(org, { limit: 5, offset: 0, descending: true, createdFrom: null, createdTo: null }),
      ).toMatchObject({ count: 1 });
      expect(await s.evaluations.sourceCounts(org)).toEqual([
        { type: 'request_domain', label: 'document.invoice', count: 1 },
      ]);
      expect(
        (await s.evaluations.completed(org, { limit: 5, sourceType: null, sourceLabel: null })).map((r) => r.id),
      ).toEqual([run.id]);
      expect(await s.evaluations.delete(other, run.id)).toBe(false);
      expect(await s.evaluations.delete(org, run.id)).toBe(true);
    });

    it("lists an organisation's keys oldest first, revoked ones included, and no other organisation's", async () => {
      const user = await s.accounts.createUser({ orgId: org, name: 'ana', isSuperuser: false });
      const stranger = await s.accounts.createUser({ orgId: other, name: 'bo', isSuperuser: false });
      const first = await s.accounts.createKey({ orgId: org, userId: user.id, name: 'a', keyHash: 'h1', prefix: 'p1' });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await s.accounts.createKey({
        orgId: org,
        userId: user.id,
        name: 'b',
        keyHash: 'h2',
        prefix: 'p2',
      });
      await s.accounts.createKey({ orgId: other, userId: stranger.id, name: 'c', keyHash: 'h3', prefix: 'p3' });
      await s.accounts.revokeKey(first.id);
      const keys = await s.accounts.listKeys(org);
      expect(keys.map((k) => k.id)).toEqual([first.id, second.id]);
      expect(keys[0]?.revokedAt).toBeInstanceOf(Date);
      expect(keys[1]).toMatchObject({ name: 'b', prefix: 'p2', revokedAt: null });
      expect(keys[1]).not.toHaveProperty('keyHash');
    });

    it('MCP OAuth: requests and codes are single use, tokens end with their sign-in key, a revocation wins once', async () => {
      const now = 1_900_000_000;
      const user = await s.accounts.createUser({ orgId: org, name: 'ana', isSuperuser: true });
      const key = await s.accounts.createKey({ orgId: org, userId: user.id, name: 'k', keyHash: 'hk', prefix: 'pk' });
      await s.oauth.insertClient('client-1', { client_name: 'Inspector', redirect_uris: ['http://127.0.0.1/cb'] });
      expect(await s.oauth.getClient('client-1')).toEqual({
        client_name: 'Inspector',
        redirect_uris: ['http://127.0.0.1/cb'],
      });
      expect(await s.oauth.getClient('nobody')).toBeNull();

      const params = {
        redirectUri: 'http://127.0.0.1/cb',
        state: 's',
        scopes: ['mcp'],
        codeChallenge: 'cc',
        resource: 'r',
      };
      await s.oauth.insertRequest('req-hash', { clientId: 'client-1', csrfHash: 'csrf', params, expiresAt: now + 600 });
      expect(await s.oauth.getRequest('req-hash', now)).toEqual({
        clientId: 'client-1',
        csrfHash: 'csrf',
        params,
        expiresAt: now + 600,
      });
      expect(await s.oauth.getRequest('req-hash', now + 600)).toBeNull();
      expect(await Promise.all([s.oauth.takeRequest('req-hash'), s.oauth.takeRequest('req-hash')])).toEqual(
        expect.arrayContaining([true, false]),
      );

      const grant = {
        grantId: 'grant-1',
        clientId: 'client-1',
        orgId: org,
        userId: user.id,
        keyId: key.id,
        scopes: ['mcp', 'files'],
        resource: 'r',
      };
      const code = { ...grant, codeChallenge: 'cc', redirectUri: 'http://127.0.0.1/cb', expiresAt: now + 60 };
      await s.oauth.insertCode('code-hash', code, now);
      expect(await s.oauth.getCode('code-hash', now)).toEqual(code);
      const taken = await Promise.all([s.oauth.takeCode('code-hash', now), s.oauth.takeCode('code-hash', now)]);
      expect(taken.filter((c) => c !== null)).toEqual([code]);
      await s.oauth.insertCode('late-hash', code, now);
      expect(await s.oauth.takeCode('late-hash', now + 60)).toBeNull();

      await s.oauth.insertTokens([
        { ...grant, tokenHash: 'access-hash', kind: 'access', expiresAt: now + 3600 },
        { ...grant, tokenHash: 'refresh-hash', kind: 'refresh', expiresAt: now + 86_400 },
      ]);
      expect(await s.oauth.findToken('access-hash', 'access', now)).toEqual({
        ...grant,
        kind: 'access',
        expiresAt: now + 3600,
        tier: 'pro',
        isSuperuser: true,
        revoked: false,
      });
      expect(await s.oauth.findToken('access-hash', 'refresh', now)).toBeNull();
      expect(await s.oauth.findToken('access-hash', 'access', now + 3600)).toBeNull();
      // A tier change applies to the next lookup.
      await s.accounts.setOrgTier(org, 'enterprise');
      expect(await s.oauth.findToken('access-hash', 'access', now)).toMatchObject({ tier: 'enterprise' });

      const rotations = await Promise.all([
        s.oauth.revokeToken('refresh-hash', now),
        s.oauth.revokeToken('refresh-hash', now),
      ]);
      expect(rotations.filter(Boolean)).toHaveLength(1);
      expect(await s.oauth.findToken('refresh-hash', 'refresh', now)).toMatchObject({ revoked: true });
      await s.oauth.revokeGrant('grant-1', now);
      expect(await s.oauth.findToken('access-hash', 'access', now)).toMatchObject({ revoked: true });

      // Revoking the sign-in key ends its tokens at once.
      await s.oauth.insertTokens([
        { ...grant, grantId: 'grant-2', tokenHash: 'a2', kind: 'access', expiresAt: now + 60 },
      ]);
      expect(await s.oauth.findToken('a2', 'access', now)).not.toBeNull();
      await s.accounts.revokeKey(key.id);
      expect(await s.oauth.findToken('a2', 'access', now)).toBeNull();
    });
  });
}
