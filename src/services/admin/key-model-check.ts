/**
 * The per-key allow-list of models (the operator's API, docs/admin.md), as every route that names a model asks it:
 * chat completions, embeddings, transcriptions, agent executions and generate requests call `checkKeyModelOf` with
 * the model the caller named, before anything is resolved or held, so one rule (only keyed calls are checked) lives
 * in one place. It lives here, not in src/gateway, because the services below the gateway ask it too.
 */
import type { Principal } from '../../domain/account';

/** @throws 403 `model_not_allowed` when the key may not call the model (src/services/admin/key-policies.ts). */
export type KeyModelCheck = (keyId: string, model: string) => Promise<void>;

/** Runs `check` for a keyed caller; guests and callers without a key have no allow-list. */
export async function checkKeyModelOf(
  check: KeyModelCheck | undefined,
  principal: Principal,
  model: string,
): Promise<void> {
  if (check && principal.kind === 'user' && principal.keyId) await check(principal.keyId, model);
}
