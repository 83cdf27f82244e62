import { createKeyedMutex } from '../../../src/lib/keyed-mutex';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('keyed mutex', () => {
  it('runs work for one key one at a time, in order, even after a failure', async () => {
    const mutex = createKeyedMutex();
    const events: string[] = [];
    const job = (name: string, fail = false) =>
      mutex.run('k', async () => {
        events.push(`start ${name}`);
        await tick();
        events.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([job('a', true), job('b'), job('c')]);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
  });

  it('lets different keys overlap', async () => {
    const mutex = createKeyedMutex();
    const events: string[] = [];
    await Promise.all(
      ['x', 'y'].map((k) =>
        mutex.run(k, async () => {
          events.push(`start ${k}`);
          await tick();
          events.push(`end ${k}`);
        }),
      ),
    );
    expect(events.slice(0, 2)).toEqual(['start x', 'start y']);
  });
});
