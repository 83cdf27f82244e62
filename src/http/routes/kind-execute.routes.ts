/**
 * `POST /v1/{image,document,audio,video}/execute` (the VLM Run SDKs' execute call, src/wire/kind-execute.schemas.ts):
 * run the agent named in the body on its one input; when the organisation has no agent of that name, the skill of
 * that name. Answers the execution record, as `POST /v1/agent/execute` does (poll `GET /v1/agent/executions/{id}`).
 */
import { Router } from 'express';
import { AppError, NotFoundError } from '../../domain/errors';
import type { ExecutionsService } from '../../services/executions/executions.types';
import { toExecutionWire } from '../../wire/agents.schemas';
import { asSkillCommand, kindExecuteBodySchema, toKindExecuteCommand } from '../../wire/kind-execute.schemas';
import { declare, route } from '../api/route-declaration';
import { executionSchema } from '../api/response-schemas';
import { userOf } from '../request-context';

const notFound = (error: unknown, code: string): boolean => error instanceof AppError && error.code === code;

const KINDS = ['image', 'document', 'audio', 'video'] as const;

const executeDeclaration = (kind: (typeof KINDS)[number]) =>
  declare({
    method: 'post',
    path: `/${kind}/execute`,
    tag: 'Agents',
    summary: `Run a named agent (or skill) on one ${kind} (the VLM Run SDKs' execute)`,
    auth: 'key',
    body: kindExecuteBodySchema,
    responses: {
      200: { description: 'The execution (poll GET /v1/agent/executions/{id} while it runs)', schema: executionSchema },
    },
    errors: [400, 402, 403, 404, 502, 504],
  });

export const KIND_EXECUTE_ROUTES = {
  image: executeDeclaration('image'),
  document: executeDeclaration('document'),
  audio: executeDeclaration('audio'),
  video: executeDeclaration('video'),
};

export function kindExecuteRoutes(executions: ExecutionsService): Router {
  const router = Router();
  for (const kind of KINDS) {
    route(router, KIND_EXECUTE_ROUTES[kind], async (req, res, input) => {
      const principal = userOf(req); // a keyless caller gets 401 before any 422
      const body = input.body();
      const command = toKindExecuteCommand(kind, body);
      try {
        res.json(toExecutionWire(await executions.execute(principal, command)));
      } catch (error) {
        if (!notFound(error, 'agent_not_found')) throw error;
        try {
          res.json(toExecutionWire(await executions.execute(principal, asSkillCommand(command, body))));
        } catch (second) {
          if (!notFound(second, 'skill_not_found')) throw second;
          throw new NotFoundError('agent', body.name, 'no agent or skill of this organisation has that name');
        }
      }
    });
  }
  return router;
}
