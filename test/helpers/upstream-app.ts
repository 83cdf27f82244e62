/**
 * The app wired to a scripted upstream: starts the scripted OpenAI-compatible server, writes a models file naming
 * it (one upstream `lab`, the given models served by it) and starts the real app on that file. Suites that talk to
 * an upstream chat model share this set-up instead of each writing the same YAML and clean-up again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream';
import { startTestApp, type TestApp } from './test-app';

/** One model of the models file, served by the upstream `lab`. */
export interface LabModel {
  /** The id callers name. */
  id: string;
  /** The name the upstream is asked for. */
  upstreamModel: string;
  /** `capabilities` (default `{ supported_input_types: [text] }`; given, it replaces the default whole; null: none). */
  capabilities?: Record<string, unknown> | null;
  /** `supported_parameters`. */
  parameters?: string[];
  /** USD per million tokens. */
  pricing?: { prompt: number; completion: number };
  /** Any other keys of the model entry (aliases, timeouts, serving), as they are. */
  more?: Record<string, unknown>;
}

/** The agent chat model planned by an upstream with tool calling and streaming (the agent-chat suites' model). */
export const CHAT_PLANNER: LabModel = {
  id: 'prism-orion-1',
  upstreamModel: 'planner-llm',
  parameters: ['tools', 'tool_choice', 'temperature', 'stream', 'stream_options', 'max_tokens'],
  pricing: { prompt: 2.0, completion: 4.0 },
};

export interface LabUpstream {
  /** The upstream's `provider` label (none: the file names none). */
  provider?: string;
  /** `api_key_env`: the setting that holds the upstream's key. */
  apiKeyEnv?: string;
}

export interface LabOptions extends LabUpstream {
  /** More settings for the app, besides PRISM_MODELS_FILE. */
  env?: Record<string, string>;
}

export interface UpstreamApp {
  app: TestApp;
  upstream: ScriptedUpstream;
  /** The folder that holds the models file. */
  dir: string;
  /** Closes the app and the upstream and removes the models folder. */
  close(): Promise<void>;
}

/** A YAML value written as JSON (YAML's flow style reads it as it is). */
const flow = (value: unknown): string => JSON.stringify(value);

/** Writes `dir/models.yaml` with the upstream `lab` at `upstreamUrl` serving `models`; returns its path. */
export function writeLabModelsFile(
  dir: string,
  upstreamUrl: string,
  models: LabModel[],
  upstream: LabUpstream = {},
): string {
  const lines = ['upstreams:', '  - name: lab', `    base_url: ${flow(upstreamUrl)}`];
  if (upstream.apiKeyEnv !== undefined) lines.push(`    api_key_env: ${flow(upstream.apiKeyEnv)}`);
  if (upstream.provider !== undefined) lines.push(`    provider: ${flow(upstream.provider)}`);
  lines.push('models:');
  for (const model of models) {
    const entry: Record<string, unknown> = {
      engine: { kind: 'upstream', upstream: 'lab', model: model.upstreamModel },
      ...(model.capabilities === null
        ? {}
        : { capabilities: model.capabilities ?? { supported_input_types: ['text'] } }),
      ...(model.parameters ? { supported_parameters: model.parameters } : {}),
      ...(model.pricing ? { pricing: model.pricing } : {}),
      ...model.more,
    };
    lines.push(`  - id: ${flow(model.id)}`, ...Object.entries(entry).map(([k, v]) => `    ${k}: ${flow(v)}`));
  }
  const file = path.join(dir, 'models.yaml');
  fs.writeFileSync(file, [...lines, ''].join('\n'));
  return file;
}

/** Starts a scripted upstream and the app with a models file serving `models` from it. */
export async function startUpstreamApp(models: LabModel[], options: LabOptions = {}): Promise<UpstreamApp> {
  const upstream = await startScriptedUpstream();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-upstream-app-'));
  const modelsFile = writeLabModelsFile(dir, upstream.baseUrl, models, options);
  const app = await startTestApp({ ...options.env, PRISM_MODELS_FILE: modelsFile });
  return {
    app,
    upstream,
    dir,
    async close() {
      await app.close();
      await upstream.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
