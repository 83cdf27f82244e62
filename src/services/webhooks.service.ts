/**
 * Webhooks: when a prediction with a `callback_url` finishes, POST its full record there.
 *
 * The body is signed with `X-Prism-Signature: sha256=<hex HMAC-SHA256 of the raw body>` under the webhook secret
 * so receivers can check it came from us. Each attempt has a time limit; network errors, 408, 429 and 5xx are
 * retried with exponential backoff; other 4xx are final. Every attempt's outcome is recorded with the prediction.
 * The URL goes through the same private-address guard as URL inputs.
 */
import { createHmac } from 'node:crypto';
import type { Prediction } from '../domain/prediction';
import type { Logger } from '../lib/logger';
import { safeFetch, SafeFetchError } from '../lib/safe-fetch';
import type { PredictionStore } from '../stores/types';

/** What a sender needs of a record: predictions, agent executions and LangGraph runs through senders of their own. */
export type WebhookSubject = { id: string; status: string; callbackUrl: string | null };

export interface WebhookSenderDeps<T extends WebhookSubject = Prediction> {
  /** Records each attempt; `predictionId` holds the record's id whatever its kind. */
  store: Pick<PredictionStore, 'recordDelivery'>;
  secret: string;
  /** The wire shape of the record (the same body its GET returns). */
  render: (record: T) => unknown;
  /** `X-Prism-Event` is `<eventPrefix>.<status>` (default `prediction`). */
  eventPrefix?: string;
  timeoutMs: number;
  attempts: number;
  backoffMs: number;
  allowPrivate: boolean;
  logger: Logger;
}

export interface WebhookSender<T extends WebhookSubject = Prediction> {
  /** Starts delivery in the background; never throws. */
  deliver(record: T): void;
  /** Resolves when every delivery in flight has finished (tests, shutdown). */
  idle(): Promise<void>;
  close(): void;
}

export const signatureOf = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const RETRYABLE = (status: number): boolean => status === 408 || status === 429 || status >= 500;

export function createWebhookSender<T extends WebhookSubject = Prediction>(
  deps: WebhookSenderDeps<T>,
): WebhookSender<T> {
  const eventPrefix = deps.eventPrefix ?? 'prediction';
  const inFlight = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function send(prediction: T, url: string): Promise<void> {
    const body = JSON.stringify(deps.render(prediction));
    const headers = {
      'content-type': 'application/json',
      'x-prism-signature': signatureOf(deps.secret, body),
      'x-prism-event': `${eventPrefix}.${prediction.status}`,
    };
    for (let attempt = 1; attempt <= deps.attempts && !closed; attempt += 1) {
      let statusCode: number | null = null;
      let error: string;
      let retry: boolean;
      try {
        const res = await safeFetch(url, {
          method: 'POST',
          headers,
          body,
          followRedirects: false,
          allowPrivate: deps.allowPrivate,
          maxBytes: 64 * 1024,
          timeoutMs: deps.timeoutMs,
        });
        statusCode = res.status;
        if (res.status >= 200 && res.status < 300) {
          await record(prediction.id, url, attempt, statusCode, 'delivered', null);
          return;
        }
        retry = RETRYABLE(res.status);
        error = `HTTP ${res.status}`;
      } catch (caught) {
        error = caught instanceof Error ? caught.message : String(caught);
        retry = !(caught instanceof SafeFetchError && caught.kind === 'not_allowed');
      }
      const last = !retry || attempt === deps.attempts;
      await record(prediction.id, url, attempt, statusCode, last ? 'gave_up' : 'failed', error);
      if (last) return;
      await sleep(deps.backoffMs * 2 ** (attempt - 1));
    }
  }

  async function record(
    predictionId: string,
    url: string,
    attempt: number,
    statusCode: number | null,
    outcome: 'delivered' | 'failed' | 'gave_up',
    error: string | null,
  ): Promise<void> {
    await deps.store
      .recordDelivery({ predictionId, url, attempt, statusCode, outcome, error, createdAt: new Date() })
      .catch((e: unknown) => deps.logger.warn('could not record webhook delivery', { error: String(e) }));
  }

  return {
    deliver(prediction) {
      const url = prediction.callbackUrl;
      if (!url || closed) return;
      const job = send(prediction, url)
        .catch((error: unknown) => deps.logger.warn('webhook delivery failed', { error: String(error) }))
        .finally(() => inFlight.delete(job));
      inFlight.add(job);
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
