/**
 * A batch agent run stopped mid-way by a shutdown, for the suites about what the next start does with it: a server
 * on a fresh data folder takes a receipt and a batch execution whose planner first asks for OCR (checkpointed),
 * then hangs on its second planning call; the server is stopped there, leaving the record `running`. The caller
 * starts a server again on `dataDir` with `env`.
 */
import { renderReceiptImage } from './media-fixtures';
import type { ScriptedUpstream, UpstreamScript } from './scripted-upstream';
import { call, startTestApp, uploadFile } from './test-app';
import { writeLabModelsFile } from './upstream-app';

export interface InterruptedRun {
  /** The settings to start the next server with (the models file, a one-second shutdown grace). */
  env: Record<string, string>;
  dataDir: string;
  key: string;
  executionId: string;
}

/**
 * @param dir where the models file is written.
 * @param options.more extra settings of the planner model (e.g. its timeouts).
 * @param options.then what the upstream answers after the hanging call (the next starts' planning calls).
 */
export async function interruptAgentRun(
  upstream: ScriptedUpstream,
  dir: string,
  options: { org: string; more?: Record<string, unknown>; then?: UpstreamScript[] },
): Promise<InterruptedRun> {
  const modelsFile = writeLabModelsFile(dir, upstream.baseUrl, [
    {
      id: 'prism-orion-1',
      upstreamModel: 'planner-llm',
      pricing: { prompt: 1.0, completion: 1.0 },
      ...(options.more ? { more: options.more } : {}),
    },
  ]);
  const env = { PRISM_MODELS_FILE: modelsFile, PRISM_SHUTDOWN_GRACE_S: '1' };
  const first = await startTestApp(env);
  const key = await first.createKey(options.org);
  await first.container.services.accounts.addCredits(options.org, 1);
  const upload = await uploadFile(first.url, key, renderReceiptImage(), { filename: 'r.png' });
  const fileId = ((await upload.json()) as { id: string }).id;
  const before = upstream.requests.length;
  upstream.next(
    {
      kind: 'reply',
      toolCalls: [{ id: 'call_1', name: 'ocr_image', arguments: JSON.stringify({ image: fileId }) }],
      usage: { prompt_tokens: 10, completion_tokens: 10 },
    },
    { kind: 'hang' },
    ...(options.then ?? []),
  );
  const queued = (await (
    await call(`${first.url}/v1/agent/execute`, {
      key,
      json: { batch: true, inputs: { r: { type: 'input_file', file_id: fileId } }, config: { prompt: 'Read it' } },
    })
  ).json()) as { id: string };
  // The second planning call hangs: the OCR step is done and checkpointed.
  for (let i = 0; upstream.requests.length < before + 2; i += 1) {
    if (i >= 400) throw new Error('timed out waiting for the second planning call');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await first.stop();
  return { env, dataDir: first.dataDir, key, executionId: queued.id };
}
