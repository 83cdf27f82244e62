/**
 * Evaluations benchmark (issue target: an evaluation over 1,000 stored items with feedback finishes in <= 2 s on
 * one core).
 *
 * 1,000 completed `document.invoice` predictions (20 leaves each, nested addresses and a list of items) are written
 * straight to the store, each with feedback: 900 corrected `response` JSON (two fields differ from the prediction)
 * and 100 notes inferred by the deterministic rules. Each round is `POST /v1/evaluations/run` with
 * field_accuracy, fuzzy_field_match and equals_expected over HTTP, then polling `GET /v1/evaluations/{id}` every
 * 5 ms until it is `completed`: the figure is that wall time, request to completed record, items written.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config';
import type { Principal } from '../src/domain/account';
import { defaultPredictionRequest, EMPTY_USAGE, type Prediction } from '../src/domain/prediction';
import { startServer } from '../src/http-server';

const ITEMS = 1000;
const ROUNDS = 5;

function invoice(i: number): Record<string, unknown> {
  return {
    invoice_id: `INV-${10_000 + i}`,
    invoice_issue_date: '2024-03-01',
    issuer_name: 'ACME Supplies Sdn Bhd',
    issuer_address: {
      street: '12 Jalan Besar',
      city: 'Kuala Lumpur',
      state: 'WP',
      postal_code: '50000',
      country: 'MY',
    },
    customer_name: `Customer ${i}`,
    customer_email: `buyer${i}@example.com`,
    customer_billing_address: {
      street: `${i} Main Street`,
      city: 'Penang',
      state: 'PG',
      postal_code: '10000',
      country: 'MY',
    },
    items: [
      { description: 'Widget', quantity: 2, unit_price: 10.5, total_price: 21 },
      { description: 'Gadget', quantity: 1, unit_price: 99, total_price: 99 },
    ],
    currency: 'MYR',
    subtotal: 120,
    tax_amount: 7.2,
    total_amount: 127.2,
    payment_terms: 'Net 30',
    notes: `Thank you for order ${i}`,
    _metadata: { confidence: 0.9 },
  };
}

export async function evaluationBenchmarks(): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-evals-'));
  const config = loadConfig({ PRISM_DATA_DIR: dataDir, PORT: '0', PRISM_LOG_LEVEL: 'silent' });
  const running = await startServer(config, { announce: () => undefined });
  try {
    const { container } = running;
    const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
    const owner = (await container.services.accounts.ownerPrincipal()) as Principal;
    const orgId = owner.kind === 'user' ? owner.orgId : '';
    const base = Date.now() - ITEMS * 1000;
    for (let i = 0; i < ITEMS; i += 1) {
      const at = new Date(base + i * 1000);
      const response = invoice(i);
      const prediction: Prediction = {
        id: randomUUID(),
        orgId,
        kind: 'document',
        model: 'prism-1',
        domain: 'document.invoice',
        status: 'completed',
        request: defaultPredictionRequest(),
        inputs: [],
        response,
        usage: EMPTY_USAGE,
        errorMessage: null,
        callbackUrl: null,
        attempts: 1,
        createdAt: at,
        completedAt: at,
      };
      await container.stores.predictions.insert(prediction, []);
      const corrected = { ...response, total_amount: 127.25, customer_name: `Customer No. ${i}` };
      await container.stores.feedback.insert({
        id: randomUUID(),
        orgId,
        entityType: 'request',
        entityId: prediction.id,
        response: i % 10 === 0 ? null : corrected,
        notes: i % 10 === 0 ? 'total_amount should be 127.25; currency: MYR' : null,
        createdAt: at,
      });
    }
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const times: number[] = [];
    let last: Record<string, unknown> = {};
    for (let round = 0; round < ROUNDS; round += 1) {
      const started = performance.now();
      const res = await fetch(`${running.url}/v1/evaluations/run`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          source_type: 'request_domain',
          source_id: 'document.invoice',
          evaluators: ['field_accuracy', 'fuzzy_field_match', 'equals_expected'],
          infer_corrections: true,
        }),
      });
      const { id } = (await res.json()) as { id: string };
      for (;;) {
        last = (await (await fetch(`${running.url}/v1/evaluations/${id}`, { headers })).json()) as Record<
          string,
          unknown
        >;
        if (last.status !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      times.push(performance.now() - started);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    return [
      `evaluation over ${String(last.total_items)} stored items (${String(last.total_with_feedback)} with feedback), ` +
        `3 evaluators, status ${String(last.status)}, accuracy ${String(last.accuracy)}: ` +
        `median ${(median / 1000).toFixed(3)} s, max ${((sorted.at(-1) as number) / 1000).toFixed(3)} s over ${ROUNDS} ` +
        `runs (target <= 2 s): ${median <= 2000 ? 'PASS' : 'FAIL'}`,
    ];
  } finally {
    await running.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
