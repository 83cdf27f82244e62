/**
 * Signals between replicas: small messages (a cancellation, a wake-up), delivered to every subscriber in every
 * replica that is listening when they are sent, and to nobody later. They carry no state: anything that must
 * survive lives in the stores. One process-local bus (the default, one replica) and one on Redis pub/sub
 * (redis.signal-bus.ts) implement it.
 */
import { EventEmitter } from 'node:events';

export type SignalListener = (message: string) => void;

export interface SignalBus {
  /** Sends `message` to every listener of `channel` in every replica, this one included. */
  publish(channel: string, message: string): Promise<void>;
  /** Listens on `channel` until the returned function is called. */
  subscribe(channel: string, listener: SignalListener): () => void;
  close(): Promise<void>;
}

/** The bus of a single replica: an EventEmitter. */
export function createLocalSignalBus(): SignalBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(channel, message) {
      emitter.emit(channel, message);
    },
    subscribe(channel, listener) {
      emitter.on(channel, listener);
      return () => emitter.off(channel, listener);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}
