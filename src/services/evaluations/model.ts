/**
 * The upstream chat model evaluations may use (llm_judge, inferring corrections from notes, rewriting instructions
 * in optimize), as a port: the container builds it from the gateway's catalogue and upstream client, tests reach
 * it through a scripted OpenAI-compatible server. Null when the server has no upstream chat model.
 */

export interface EvaluationModel {
  id: string;
  complete(messages: Array<{ role: 'system' | 'user'; content: string }>): Promise<string>;
}

/** The setting that names the model; errors and notes quote it so an operator knows what to set. */
export const EVALUATION_MODEL_SETTING = 'PRISM_EVAL_MODEL';

/** The first JSON object in a model's reply (fenced or bare), or undefined. */
export function firstJsonObject(reply: string): Record<string, unknown> | undefined {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply);
  const candidates = [fenced?.[1], reply];
  for (const text of candidates) {
    if (text === undefined) continue;
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (start < 0 || end <= start) continue;
    try {
      const parsed = JSON.parse(text.slice(start, end + 1)) as unknown;
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}
