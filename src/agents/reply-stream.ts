/**
 * Which planner text a streamed chat reply shows, and when: the gate between the planner's content deltas and the
 * caller's `onText`, one round (one planner call) at a time.
 *
 * Only text that can be the final answer is streamed. The runtime opens the gate for tasks without a response
 * schema whose caller asks for the text (chat turns, and executions run with `stream: true`; a JSON reply must pass
 * `checkFinal` and is sent whole), and the loop opens a round only where an
 * answer without tool calls ends the run (no skill-graph sub-goal after the current one). Within a round the planner
 * forwards content until the first tool-call delta (sdk `PlanRequest.onText`).
 *
 * A round's text is held back until it reaches {@link HOLD_BACK_CHARS} characters or the round ends:
 * - a round that calls tools before that never shows its text (the short "Let me read the receipt." preamble
 *   models write before a tool call is dropped, as the non-streamed reply drops it);
 * - a round that ends without tool calls is the answer: everything held is sent when it ends;
 * - once a round has shown text, the rest streams as it comes. If that round then calls tools after all, what was
 *   shown stays shown and stays part of the reply: the next round's text follows it after a blank line.
 * Why not hold a round back until it is known to be final: that is the end of the round, so nothing would stream.
 * Why not forward everything at once: then every preamble becomes part of the reply. 120 characters cover a
 * one-sentence preamble and are about 30 tokens: the first byte waits for them, 0.3 s at 100 tokens/s, 1 s at 30
 * (measured: 0.95 s at 140 characters/s from a scripted upstream, against 2 s for the whole answer).
 * Why not the first newline: preambles often end with one ("I'll read the receipt.\n\n") right before the call.
 *
 * `sent` is every character passed on, so the stored reply is exactly what the client read: the final round's text
 * when nothing else was shown, else the shown text of earlier rounds, the separators and the final round's text.
 */

/** Characters of a round held back to see whether it calls a tool before anything is shown. */
export const HOLD_BACK_CHARS = 120;

/** One planner round: its content deltas, then whether it called tools. */
export interface ReplyRound {
  onText(delta: string): void;
  end(calledTools: boolean): void;
}

export interface ReplyStream {
  /** Opens the gate for the next planner round that may be the final answer. */
  round(): ReplyRound;
  /** Everything passed on so far, in order. */
  readonly sent: string;
}

export function createReplyStream(onText: (delta: string) => void, holdBack = HOLD_BACK_CHARS): ReplyStream {
  let sent = '';
  const emit = (text: string): void => {
    if (text === '') return;
    sent += text;
    onText(text);
  };
  /** What goes between text an earlier round showed and this round's first text: a blank line. */
  const separator = (): string => {
    if (sent === '' || sent.endsWith('\n\n')) return '';
    return sent.endsWith('\n') ? '\n' : '\n\n';
  };

  return {
    get sent() {
      return sent;
    },
    round() {
      let held = '';
      let open = false;
      let ended = false;
      return {
        onText(delta) {
          if (ended || delta === '') return;
          if (open) {
            emit(delta);
            return;
          }
          held += delta;
          if (held.length >= holdBack) {
            open = true;
            emit(separator() + held);
            held = '';
          }
        },
        end(calledTools) {
          if (ended) return;
          ended = true;
          if (!open && !calledTools && held !== '') emit(separator() + held);
          held = '';
        },
      };
    },
  };
}
