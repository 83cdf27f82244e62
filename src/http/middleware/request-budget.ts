/**
 * Starts the request's work budget (src/lib/work-budget.ts) once its body has been read: everything the route does
 * after this (and everything that awaits) spends it, so a request's schemas, bundles and YAML add up against one
 * budget. Callers without a key get the smaller one.
 *
 * Placed right after the JSON body parser (not before it): the parser finishes in the request stream's own async
 * context, which a budget entered earlier would not reach.
 *
 * Large JSON schemas the body carries (`json_schema`, `config.json_schema`, `response_format`, …) are compiled on
 * a structure worker before the route runs (lib/json-schema.ts `prepareSchemas`), on this budget, so the route's
 * own check finds them compiled and the event loop never runs ajv on them.
 */
import type { RequestHandler } from 'express';
import { prepareSchemas, schemasIn } from '../../lib/json-schema';
import { requestWorkBudget, runWithWorkBudget, type WorkLimits } from '../../lib/work-budget';

export function requestBudget(limits: { anonymous: WorkLimits; keyed: WorkLimits }): RequestHandler {
  return (req, _res, next) => {
    runWithWorkBudget(requestWorkBudget(limits, req.principal?.kind === 'user'), () => {
      const schemas = schemasIn(req.body);
      if (schemas.length === 0) next();
      else prepareSchemas(schemas).then(() => next(), next);
    });
  };
}
