/**
 * Starts the request's work budget (src/lib/work-budget.ts) once its body has been read: everything the route does
 * after this (and everything that awaits) spends it, so a request's schemas, bundles and YAML add up against one
 * budget. Callers without a key get the smaller one.
 *
 * Placed right after the JSON body parser (not before it): the parser finishes in the request stream's own async
 * context, which a budget entered earlier would not reach.
 */
import type { RequestHandler } from 'express';
import { requestWorkBudget, runWithWorkBudget, type WorkLimits } from '../../lib/work-budget';

export function requestBudget(limits: { anonymous: WorkLimits; keyed: WorkLimits }): RequestHandler {
  return (req, _res, next) => {
    runWithWorkBudget(requestWorkBudget(limits, req.principal?.kind === 'user'), next);
  };
}
