/**
 * A chat model of the catalogue served by an upstream, as the text-in, text-out port that evaluations
 * (EvaluationModel) and skill drafting (DraftingModel) take: one chat call at temperature 0, the reply's text.
 * Both ports have this shape; the container builds them here so the call is written once.
 */
import type { ModelCatalogue } from '../gateway/catalogue/model-catalogue';
import type { CatalogueModel } from '../gateway/catalogue/model.types';
import type { UpstreamClient } from '../gateway/upstream/upstream-client';

export interface UpstreamTextModel {
  id: string;
  complete(messages: Array<{ role: 'system' | 'user'; content: string }>): Promise<string>;
}

/** `model` as a text model; null when there is no model or no upstream serves it. */
export function upstreamTextModel(
  catalogue: ModelCatalogue,
  upstream: UpstreamClient,
  model: CatalogueModel | undefined,
): UpstreamTextModel | null {
  const target = model ? catalogue.upstreamTarget(model) : null;
  if (!model || !target) return null;
  return {
    id: model.id,
    async complete(messages) {
      const reply = await upstream.chat(target, { model: target.model, messages, temperature: 0 });
      const choices = reply.choices as Array<{ message?: { content?: unknown } }> | undefined;
      const content = choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new Error(`model ${model.id} answered without text`);
      return content;
    },
  };
}
