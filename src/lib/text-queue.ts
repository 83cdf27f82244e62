/**
 * A bounded queue of text pieces between a producer that must never wait (the agent runtime's `onText` callback)
 * and a consumer that may be slow (the SSE writer awaiting a full socket's `drain`).
 *
 * `push` never blocks and never drops text: it appends a piece, and once `maxPieces` pieces are waiting it joins
 * the new text onto the last one instead. So the number of waiting pieces is bounded, and the memory they use is
 * bounded by the text itself (an agent reply, itself bounded by the planner's completion budget), however slowly
 * the consumer reads. `take` hands the consumer everything waiting at once, so a slow reader sends larger chunks
 * rather than falling behind.
 */

export class TextQueue {
  private pieces: string[] = [];
  private pushed = '';
  private closed = false;
  private wake: (() => void) | null = null;
  private arrived: Promise<void> | null = null;
  private signalArrival: (() => void) | null = null;

  constructor(private readonly maxPieces = 64) {}

  /** Adds text (empty text is ignored); a no-op once closed. */
  push(text: string): void {
    if (this.closed || text === '') return;
    this.pushed += text;
    if (this.pieces.length < this.maxPieces) this.pieces.push(text);
    else this.pieces[this.pieces.length - 1] += text;
    this.signalArrival?.();
    this.notify();
  }

  /** Everything pushed so far, in order (what the consumer will have sent once it has taken all of it). */
  get text(): string {
    return this.pushed;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** No more text will come; a waiting consumer wakes. */
  close(): void {
    this.closed = true;
    this.notify();
  }

  /** Every waiting piece, oldest first (empty when none). */
  take(): string[] {
    const pieces = this.pieces;
    this.pieces = [];
    return pieces;
  }

  /** Resolves when text is waiting or the queue is closed (at once if either holds already). */
  ready(): Promise<void> {
    if (this.pieces.length > 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  /** Resolves when the first text has been pushed (never, if none is). */
  firstText(): Promise<void> {
    if (this.pushed !== '') return Promise.resolve();
    this.arrived ??= new Promise((resolve) => {
      this.signalArrival = () => {
        this.signalArrival = null;
        resolve();
      };
    });
    return this.arrived;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
