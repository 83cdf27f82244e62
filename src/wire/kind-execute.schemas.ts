/**
 * `POST /v1/{image,document,audio,video}/execute`: the VLM Run SDKs' "execute a named model" call (TS `executeLegacy`,
 * PY/Dart `image.execute`; /work/shared/reference/real-client-compat.md §3.3). The body names an agent (or a
 * skill) and gives one input: `images` for image, `file_id` or `url` for the others. It becomes an ordinary agent
 * execution whose `inputs` hold that input, so it is listed, polled and billed like `POST /v1/agent/execute`.
 */
import { z } from 'zod';
import type { ExecuteCommand } from '../services/executions/executions.types';
import { agentSettingsOf, executeBodySchema, modelOf, requestedModeOf } from './agents.schemas';
import { fieldError } from './validation';

export type ExecuteKind = 'image' | 'document' | 'audio' | 'video';

const configSchema = executeBodySchema.shape.config;

export const kindExecuteBodySchema = z
  .object({
    name: z.string().min(1).max(200),
    version: z.string().min(1).max(100).nullish(),
    /** image: data URLs or http(s) URLs. */
    images: z.array(z.string().min(1)).min(1).max(32).nullish(),
    /** document, audio, video: an uploaded file or a URL. */
    file_id: z.string().min(1).max(200).nullish(),
    url: z.string().min(1).max(4096).nullish(),
    batch: z.boolean().nullish(),
    model: z.string().min(1).nullish(),
    callback_url: z.string().min(1).nullish(),
    config: configSchema,
    metadata: z.record(z.string(), z.unknown()).nullish(),
  })
  .loose();

export type KindExecuteBody = z.output<typeof kindExecuteBodySchema>;

/** The one input as an execution's `inputs`. @throws the spec's 422 when the kind's input is missing or doubled. */
export function kindExecuteInputs(kind: ExecuteKind, body: KindExecuteBody): Record<string, unknown> {
  if (kind === 'image') {
    if (!body.images?.length) throw fieldError('body', 'images', 'missing', 'Field required for image/execute', body);
    return { images: body.images.map((url) => ({ type: 'image_url', image_url: { url, detail: 'auto' } })) };
  }
  if (body.file_id && body.url) {
    throw fieldError('body', 'url', 'value_error', 'Send one of file_id or url, not both', body);
  }
  if (body.file_id) return { file: { type: 'input_file', file_id: body.file_id } };
  if (body.url) return { file: { type: 'file_url', file_url: { url: body.url } } };
  throw fieldError('body', 'file_id', 'missing', `Send file_id or url for ${kind}/execute`, body);
}

/** The execution command: the named agent at `version` (`latest` or absent: its newest) on the one input. */
export function toKindExecuteCommand(kind: ExecuteKind, body: KindExecuteBody): ExecuteCommand {
  const config = body.config ?? undefined;
  const pinned = body.version && body.version !== 'latest' && !body.name.includes(':');
  return {
    name: pinned ? `${body.name}:${body.version}` : body.name,
    model: modelOf(body.model ?? config?.model),
    inputs: kindExecuteInputs(kind, body),
    // The TS SDK sends batch (default true for files); a call without it waits, as /v1/agent/execute does.
    batch: body.batch ?? false,
    callbackUrl: body.callback_url ?? null,
    ...agentSettingsOf(body),
    mode: requestedModeOf(config),
    metadata: body.metadata ?? {},
    clientId: null,
    clientCreatedAt: null,
  };
}

/** The same run with no agent: the skill called `name` (at `version`) applied to the input. */
export function asSkillCommand(command: ExecuteCommand, body: KindExecuteBody): ExecuteCommand {
  const [skillName = body.name, pinned = null] = body.name.split(':');
  const version = pinned ?? (body.version && body.version !== 'latest' ? body.version : null);
  return {
    ...command,
    name: null,
    skills: [
      ...command.skills,
      { type: 'skill_reference', skill_name: skillName, ...(version ? { skill_version: version } : {}) },
    ],
  };
}
