/**
 * The errors the gateway throws: AppError subclasses (the one style errors take in Prism) with the wire fields the
 * spec names, thrown as `new ModelNotFoundError(name)` like the domain's own.
 *
 * Kept beside the gateway rather than in the domain layer because only the gateway raises them; adapters render
 * them like any other AppError. Metering's own (rate limit, queue full, credits, guest cap) are in
 * src/metering/metering-errors.ts; a caller that went away is the domain's ClientDisconnectedError.
 */
import { AppError } from '../domain/errors';

/** 404: no model or alias by that name (spec: type `model_not_found`). */
export class ModelNotFoundError extends AppError {
  constructor(name: string) {
    super(404, {
      message: `The model '${name}' does not exist; GET /v1/compat/models lists the available models`,
      type: 'model_not_found',
      code: 'model_not_found',
      param: 'model',
    });
  }
}

/** 503: the deployment is down or cold; retry after `retryAfterS` (spec default 30). */
export class ModelNotServingError extends AppError {
  constructor(id: string, retryAfterS = 30) {
    super(503, {
      message: `The model '${id}' is not serving right now; retry in ${retryAfterS} seconds`,
      type: 'service_unavailable',
      code: 'model_not_serving',
      retryAfterSeconds: retryAfterS,
    });
  }
}

/** 400: the caller asked for something this model cannot do; `param` names the parameter or content path. */
export class CapabilityViolationError extends AppError {
  constructor(message: string, param: string) {
    super(400, { message, type: 'invalid_request_error', code: 'capability_violation', param });
  }
}

/** 400: a structured model was given more than one image, video or document. */
export class TooManyInputsError extends AppError {
  constructor(modelId: string, max: number, param: string) {
    super(400, {
      message: `The model '${modelId}' takes ${max} image, video or document input${max === 1 ? '' : 's'} per request`,
      type: 'invalid_request_error',
      code: 'too_many_inputs',
      param,
    });
  }
}

/** 504: no first chunk within the model's `ttft_timeout_s`; raised before any response byte is written. */
export class TtftTimeoutError extends AppError {
  constructor(provider: string, seconds: number) {
    super(504, {
      message: `[${provider}] The model sent no first token within ${formatSeconds(seconds)} (ttft_timeout_s)`,
      type: 'timeout_error',
      code: 'ttft_timeout',
    });
  }
}

/** 504: the call ran past the model's `total_timeout_s` and was aborted; no partial result is returned. */
export class DeadlineExceededError extends AppError {
  constructor(provider: string, seconds: number) {
    super(504, {
      message: `[${provider}] The model did not finish within ${formatSeconds(seconds)} (total_timeout_s)`,
      type: 'timeout_error',
      code: 'deadline_exceeded',
    });
  }
}

/** 502: the upstream failed, answered nonsense or could not be reached. */
export class UpstreamError extends AppError {
  constructor(provider: string, detail: string) {
    super(502, { message: `[${provider}] ${detail}`, type: 'upstream_error', code: 'upstream_error' });
  }
}

/**
 * 502: the caller asked for a strict `json_schema` reply and the upstream's reply (first call and one retry that
 * carried the problems) was not JSON matching the schema; nothing invalid is passed on. `errors` are the retry's.
 */
export class UpstreamSchemaViolationError extends AppError {
  constructor(provider: string, errors: string[]) {
    super(502, {
      message:
        `[${provider}] The model's reply did not match the response_format JSON schema, also when asked again: ` +
        errors.join('; '),
      type: 'upstream_error',
      code: 'upstream_schema_violation',
      param: 'response_format',
    });
  }
}

/** 400: the upstream refused the request as invalid; its message and `param` are passed on. */
export class UpstreamRejectedError extends AppError {
  constructor(provider: string, detail: string, param: string | null) {
    super(400, {
      message: `[${provider}] ${detail}`,
      type: 'invalid_request_error',
      code: 'upstream_rejected',
      param,
    });
  }
}

/** 503: the upstream is overloaded or rate-limiting us (not the caller); retry after `retryAfterS`. */
export class UpstreamUnavailableError extends AppError {
  constructor(provider: string, detail: string, retryAfterS: number) {
    super(503, {
      message: `[${provider}] ${detail}`,
      type: 'service_unavailable',
      code: 'upstream_unavailable',
      retryAfterSeconds: retryAfterS,
    });
  }
}

function formatSeconds(seconds: number): string {
  return seconds >= 1 ? `${Number(seconds.toFixed(1))} s` : `${Math.round(seconds * 1000)} ms`;
}

/** 402: an agent chat turn stopped before a planner round its hold could not pay for (billed what it used). */
export class SpendingLimitError extends AppError {
  constructor(message: string) {
    super(402, { message, type: 'billing_error', code: 'insufficient_credits' });
  }
}
