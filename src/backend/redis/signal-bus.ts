/**
 * The signal bus on Redis pub/sub, for several replicas: the process's command connection publishes and one
 * subscriber connection per process listens (a subscribed connection can do nothing else), whatever the number of channels
 * and listeners. Channels are prefixed with the install's Redis prefix. Pub/sub keeps no history: a signal sent
 * while a replica is reconnecting is lost to it, which is why signals only ever stop or wake work whose state is
 * in the stores.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger';
import type { SignalBus, SignalListener } from '../../signals/signal-bus';

/** `publisher` is the process's command connection (shared with metering); the bus opens its subscriber. */
export function createRedisSignalBus(options: { publisher: Redis; prefix: string; logger: Logger }): SignalBus {
  const { prefix, logger, publisher } = options;
  const subscriber = publisher.duplicate({ connectionName: 'prism-signals-sub' });
  subscriber.on('error', (error: Error) => logger.warn('signals: Redis error', { error: error.message }));
  const listeners = new Map<string, Set<SignalListener>>();
  subscriber.on('message', (channel: string, message: string) => {
    for (const listener of listeners.get(channel.slice(prefix.length)) ?? []) {
      try {
        listener(message);
      } catch (error) {
        logger.error('signal listener failed', { channel, error: String(error) });
      }
    }
  });

  return {
    async publish(channel, message) {
      await publisher.publish(`${prefix}${channel}`, message);
    },
    subscribe(channel, listener) {
      let set = listeners.get(channel);
      if (!set) {
        set = new Set();
        listeners.set(channel, set);
        subscriber
          .subscribe(`${prefix}${channel}`)
          .catch((error: unknown) => logger.error('signals: subscribe failed', { channel, error: String(error) }));
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size > 0 || listeners.get(channel) !== set) return;
        listeners.delete(channel);
        subscriber.unsubscribe(`${prefix}${channel}`).catch(() => undefined);
      };
    },
    async close() {
      listeners.clear();
      subscriber.disconnect();
    },
  };
}
