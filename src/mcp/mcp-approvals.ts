/**
 * Approvals as questions, in the 2026-07-28 era's multi-round-trip requests (`input_required`). When a waiting
 * `execute_agent` / `run_skill` / `resume_execution` call ends with the run paused for a person (a tool call to
 * approve, or a skill's question), a client that declared form elicitation on the request is answered
 * `input_required`: one elicitation (approve, reject with a reason, or edit the arguments; or the answer to the
 * question) and a `requestState` naming the execution. The client asks the person and retries the same call with
 * the answer; the retry resumes the run and waits again (another pause asks again).
 *
 * The state round-trips through the client, so it is sealed with the SDK's HMAC codec (`createRequestStateCodec`)
 * under a key derived from Prism's signing secret (the same on every replica), expires, and is bound to the caller
 * (the principal's caller key) and the method: a state minted for one caller is refused for any other, before the
 * handler runs (-32602 "Invalid or expired requestState"). The resume itself is `resume_execution`'s, so the run
 * is only resumed by its organisation, as over REST. Clients without form elicitation, and every 2025 client, get
 * the paused execution and its `resume_execution` note, as before.
 */
import { createHash } from 'node:crypto';
import {
  acceptedContent,
  createRequestStateCodec,
  inputRequired,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** What a paused run's question carries back: the execution to resume. */
export interface ApprovalState {
  execution_id: string;
}

/** The key of the one elicitation in `inputRequests` (and of its answer in `inputResponses`). */
const ASK = 'approval';

/** How long a person has to answer before the state is refused (the run itself waits until its own expiry). */
const STATE_TTL_S = 24 * 3600;

/** The caller a request state is bound to: set by the HTTP bridge (authInfo.clientId) or empty on stdio. */
const callerOf = (ctx: ServerContext): string => ctx.http?.authInfo?.clientId ?? '';

/** The codec for every replica sharing `secret` (Prism's signing secret); domain-separated from its other uses. */
export function approvalCodec(secret: string): RequestStateCodec<ApprovalState> {
  const key = createHash('sha256').update(`prism mcp request state\0${secret}`).digest();
  return createRequestStateCodec<ApprovalState>({
    key,
    ttlSeconds: STATE_TTL_S,
    bind: (ctx) => `${ctx.mcpReq.method}\0${callerOf(ctx)}`,
  });
}

/** The parts of a paused execution's body the question is made of. */
interface PausedRecord {
  id: string;
  status: string;
  pause?: {
    kind?: string;
    question?: string | null;
    tool_call?: { name?: string; arguments?: unknown } | null;
  } | null;
}

/** Whether the request declared form elicitation (the capability an embedded `elicitation/create` needs). */
export function canElicit(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.['io.modelcontextprotocol/clientCapabilities'] as
    { elicitation?: { form?: unknown } } | undefined;
  const elicitation = capabilities?.elicitation;
  // An empty elicitation capability means form mode (the spec's backward-compatible default).
  return elicitation !== undefined && (Object.keys(elicitation).length === 0 || elicitation.form !== undefined);
}

/** The question for a paused execution, or null when `result` is not one (or the client cannot be asked). */
export async function askIfPaused(
  result: CallToolResult,
  ctx: ServerContext,
  codec: RequestStateCodec<ApprovalState>,
): Promise<InputRequiredResult | null> {
  const record = result.structuredContent as PausedRecord | undefined;
  if (result.isError || record?.status !== 'paused' || !record.pause || !canElicit(ctx)) return null;
  const requestState = await codec.mint({ execution_id: record.id }, ctx);
  const pause = record.pause;
  if (pause.kind === 'question') {
    return inputRequired({
      inputRequests: {
        [ASK]: inputRequired.elicit({
          message: pause.question ?? 'The run asks a question.',
          requestedSchema: {
            type: 'object',
            properties: { text: { type: 'string', title: 'Your answer' } },
            required: ['text'],
          },
        }),
      },
      requestState,
    });
  }
  const call = pause.tool_call;
  return inputRequired({
    inputRequests: {
      [ASK]: inputRequired.elicit({
        message:
          `The run wants to call '${call?.name ?? ''}' with ${JSON.stringify(call?.arguments ?? {}).slice(0, 2000)}. ` +
          'Approve it, reject it (say why), or edit its arguments.',
        requestedSchema: {
          type: 'object',
          properties: {
            decision: { type: 'string', title: 'Decision', enum: ['approve', 'reject', 'edit'] },
            reason: { type: 'string', title: 'Why (reject)' },
            arguments: { type: 'string', title: 'New arguments as JSON (edit)' },
          },
          required: ['decision'],
        },
      }),
    },
    requestState,
  });
}

/**
 * The `resume_execution` arguments for the person's answer. Declining (or cancelling) the elicitation rejects the
 * call; edit arguments that are not a JSON object are refused with the reason.
 * @throws Error with a message for the client (the caller turns it into -32602).
 */
export function resumeArguments(state: ApprovalState, responses: Record<string, unknown> | undefined) {
  const answer = acceptedContent<{ decision?: unknown; reason?: unknown; arguments?: unknown; text?: unknown }>(
    responses,
    ASK,
  );
  const id = state.execution_id;
  if (!answer) return { id, action: 'reject', reason: 'The person declined.' };
  if (typeof answer.text === 'string') return { id, action: 'answer', text: answer.text };
  const reason = typeof answer.reason === 'string' && answer.reason ? answer.reason : undefined;
  switch (answer.decision) {
    case 'approve':
      return { id, action: 'approve' };
    case 'reject':
      return { id, action: 'reject', reason: reason ?? 'Rejected by the person.' };
    case 'edit': {
      let parsed: unknown;
      try {
        parsed = typeof answer.arguments === 'string' ? JSON.parse(answer.arguments) : undefined;
      } catch {
        parsed = undefined;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new Error('The edited arguments must be a JSON object.');
      }
      return { id, action: 'edit', arguments: parsed };
    }
    default:
      throw new Error('The answer needs a decision: approve, reject or edit.');
  }
}
