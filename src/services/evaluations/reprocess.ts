/**
 * Re-processes one stored prediction with another skill, for `rerun`: the same input bytes (from the blob store),
 * the same model and request options, but the skill's schema and instructions — exactly what a new generate request
 * naming that skill would run. Nothing new is stored as a prediction and nothing is billed: the response only feeds
 * the rerun's scores. The engine work runs as the organisation's (`runForTenant`), so a rerun of hundreds of items
 * takes its turn in the shared OCR pool like that organisation's own requests instead of queueing ahead of others.
 */
import type { BlobStore } from '../../blobs/types';
import type { ParsedSkill } from '../../domain/skill';
import type { ExtractionEngine } from '../../engines/extraction-engine';
import { sniffMediaType } from '../../lib/media-type';
import { runForTenant } from '../../lib/work-tenant';
import type { PredictionStore } from '../../stores/types';
import type { HubService } from '../hub/hub.service';

export type Reprocess = (orgId: string, predictionId: string, skill: ParsedSkill) => Promise<unknown>;

/**
 * The same for a stored agent execution: its inputs run again on the executions runtime with the skill (built by the
 * agents module, services/executions/execution-rerun.ts). Throws an Error naming why when it can no longer run.
 */
export type ReprocessExecution = (orgId: string, executionId: string, skill: ParsedSkill) => Promise<unknown>;

export function createReprocess(deps: {
  predictions: PredictionStore;
  blobs: BlobStore;
  engine: ExtractionEngine;
  hub: HubService;
}): Reprocess {
  return async (orgId, predictionId, skill) => {
    const prediction = await deps.predictions.get(orgId, predictionId);
    if (!prediction) throw new Error(`prediction ${predictionId} no longer exists`);
    const [ref] = prediction.inputs;
    const bytes = ref ? await deps.blobs.read(ref.sha256) : null;
    if (!ref || !bytes) throw new Error(`the input of prediction ${predictionId} is no longer stored`);
    const sniffed = sniffMediaType(bytes);
    const baseDomain = baseDomainOf(skill);
    const domain = baseDomain && deps.hub.find(baseDomain) ? baseDomain : prediction.domain;
    const schema = skill.schema ?? (domain ? (deps.hub.find(domain)?.jsonSchema ?? null) : null);
    if (!schema) throw new Error(`skill '${skill.record.name}' has no schema.json and the item has no domain`);
    const instructions = `## Skill: ${skill.record.name}\n\n${skill.instructions}`.trim();
    const output = await runForTenant(orgId, () =>
      deps.engine.run({
        kind: prediction.kind === 'image_schema' ? 'image' : prediction.kind,
        model: prediction.model,
        domain,
        schema,
        prompt: instructions,
        request: {
          ...prediction.request,
          jsonSchema: schema,
          proposeSchema: false,
          instructions,
          skills: [{ id: skill.record.id, name: skill.record.name, skillVersion: skill.record.skillVersion }],
        },
        input: {
          bytes,
          mimeType: ref.contentType,
          family: sniffed.family === 'unknown' ? 'image' : sniffed.family,
          filename: ref.filename,
        },
      }),
    );
    return output.response;
  };
}

function baseDomainOf(skill: ParsedSkill): string | null {
  const metadata = skill.frontMatter.metadata;
  if (typeof metadata !== 'object' || metadata === null) return null;
  const base = (metadata as Record<string, unknown>).base_domain;
  return typeof base === 'string' ? base : null;
}
