/**
 * Signals between replicas: small messages (a cancellation, a wake-up), delivered to every subscriber in every
 * replica that is listening when they are sent, and to nobody later. They carry no state: anything that must
 * survive lives in the stores. One process-local bus (src/backend/local/signal-bus.ts, the default, one replica) and one on Redis pub/sub
 * (src/backend/redis/signal-bus.ts) implement it.
 */
export type SignalListener = (message: string) => void;

export interface SignalBus {
  /** Sends `message` to every listener of `channel` in every replica, this one included. */
  publish(channel: string, message: string): Promise<void>;
  /** Listens on `channel` until the returned function is called. */
  subscribe(channel: string, listener: SignalListener): () => void;
  close(): Promise<void>;
}
