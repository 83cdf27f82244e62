/**
 * What the playground's chat box decides in the browser, written as plain functions so a unit test runs the same
 * code the page runs (the page embeds their source): which model it starts on (one that chats on text, an upstream
 * one first; `prism-1` reads images and answers "Say hello" with a 400), and how a refused call reads (the error's
 * message, not the raw body).
 */

/** The fields of a `GET /v1/compat/models` record the choice reads. */
export interface PlaygroundModel {
  id: string;
  owned_by: string;
  methods: string[];
  capabilities: { supported_input_types: string[]; dimensions: number[] };
}

/** The model the chat starts on: a text chat model (no methods, not an embedder), an upstream one first; else the first. */
export function defaultChatModel(models: PlaygroundModel[]): string {
  const chats = models.filter(
    (m) =>
      m.capabilities.supported_input_types.includes('text') &&
      m.capabilities.dimensions.length === 0 &&
      m.methods.length === 0,
  );
  const upstream = chats.find((m) => m.owned_by !== 'prism');
  const first = upstream ?? chats[0] ?? models[0];
  return first ? first.id : '';
}

/** A refused call as a person reads it: `400: <message>` from any of Prism's error shapes, else the raw text cut short. */
export function chatErrorText(status: number, text: string): string {
  let message = '';
  try {
    const body = JSON.parse(text) as {
      error?: { message?: unknown };
      detail?: { error?: { message?: unknown } } | string | { msg?: unknown }[];
    };
    const detail = body.detail;
    if (body.error && typeof body.error.message === 'string') message = body.error.message;
    else if (typeof detail === 'string') message = detail;
    else if (Array.isArray(detail)) message = detail.map((d) => String(d.msg)).join('; ');
    else if (detail && detail.error && typeof detail.error.message === 'string') message = detail.error.message;
  } catch {
    message = '';
  }
  return `${status}: ${message || text.slice(0, 300)}`;
}
