/**
 * What a second message to a busy agent chat does (docs/agents.md, "multitask strategies"), as LangGraph threads do
 * (docs/langgraph.md): `enqueue` (the default) waits for the turn in progress to end and then runs on the thread as
 * it left it; `reject` is a 409 `thread_busy`; `interrupt` stops the turn in progress, keeping its user message in
 * the thread; `rollback` stops it and keeps nothing of it. One lane per chat, in this replica: a chat's turns meet
 * only when they reach the same replica (a balancer that keys on `X-Session-Id` sends them there).
 */
import { ConflictError } from '../../domain/errors';

export const CHAT_MULTITASK_STRATEGIES = ['reject', 'interrupt', 'rollback', 'enqueue'] as const;
export type ChatMultitaskStrategy = (typeof CHAT_MULTITASK_STRATEGIES)[number];

/** The turn holding a chat's lane. */
export interface TurnSlot {
  /** Set when a newer message stopped this turn: how its messages are treated. */
  readonly stoppedBy: 'interrupt' | 'rollback' | null;
  /** Called with the turn's stop when its run starts; called at once if the turn was stopped before. */
  onStop(stop: () => void): void;
  /** Gives the lane to the next turn; idempotent. */
  release(): void;
}

export function createChatTurnLanes() {
  const lanes = new Map<string, { slot: TurnSlot; stop(mode: 'interrupt' | 'rollback'): void; done: Promise<void> }>();

  return {
    /**
     * Takes the chat's lane for a turn, as `strategy` says when a turn holds it.
     * @throws ConflictError `thread_busy` under `reject` while a turn is in progress.
     */
    async enter(sessionId: string, strategy: ChatMultitaskStrategy): Promise<TurnSlot> {
      for (let busy = lanes.get(sessionId); busy; busy = lanes.get(sessionId)) {
        if (strategy === 'reject') {
          throw new ConflictError(
            `Chat '${sessionId}' has a turn in progress (multitask_strategy 'reject').`,
            'thread_busy',
          );
        }
        if (strategy !== 'enqueue') busy.stop(strategy);
        await busy.done;
      }
      let stoppedBy: TurnSlot['stoppedBy'] = null;
      let stopRun: (() => void) | null = null;
      let released = false;
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const slot: TurnSlot = {
        get stoppedBy() {
          return stoppedBy;
        },
        onStop(stop) {
          stopRun = stop;
          if (stoppedBy) stop();
        },
        release() {
          if (released) return;
          released = true;
          lanes.delete(sessionId);
          finish();
        },
      };
      lanes.set(sessionId, {
        slot,
        stop(mode) {
          stoppedBy ??= mode;
          stopRun?.();
        },
        done,
      });
      return slot;
    },
  };
}

export type ChatTurnLanes = ReturnType<typeof createChatTurnLanes>;

/** 409 to the caller whose turn a newer message stopped. */
export function turnStoppedError(sessionId: string, mode: 'interrupt' | 'rollback'): ConflictError {
  return new ConflictError(
    `A newer message on chat '${sessionId}' stopped this turn (multitask_strategy '${mode}').`,
    'turn_interrupted',
  );
}
