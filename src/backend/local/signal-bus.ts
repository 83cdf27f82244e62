/**
 * The signal bus of a single replica, on an EventEmitter: what src/signals/signal-bus.ts promises, for one process.
 */
import { EventEmitter } from 'node:events';
import type { SignalBus } from '../../signals/signal-bus';

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
