import { CancelController } from '../../../src/lib/cancel';
import { currentTenant, currentWorkSignal, runForTenant } from '../../../src/lib/work-tenant';

describe('work tenant', () => {
  it('follows the work through awaits and timers, and is absent outside it', async () => {
    expect(currentTenant()).toBeUndefined();
    const seen = await runForTenant('org-a', async () => {
      await Promise.resolve();
      const later = await new Promise<string | undefined>((resolve) => setImmediate(() => resolve(currentTenant())));
      return [currentTenant(), later];
    });
    expect(seen).toEqual(['org-a', 'org-a']);
    const both = await Promise.all([
      runForTenant('org-a', async () => (await Promise.resolve(), currentTenant())),
      runForTenant('org-b', async () => (await Promise.resolve(), currentTenant())),
    ]);
    expect(both).toEqual(['org-a', 'org-b']);
    expect(currentTenant()).toBeUndefined();
  });

  it('carries the cancel signal across awaits and timers; nested runs keep it unless they bring their own', async () => {
    const outer = new CancelController();
    const inner = new CancelController();
    expect(currentWorkSignal()).toBeUndefined();
    const seen = await runForTenant(
      'org-a',
      async () => {
        await Promise.resolve();
        const later = await new Promise((resolve) => setImmediate(() => resolve(currentWorkSignal())));
        const nested = await runForTenant('org-b', async () => {
          await Promise.resolve();
          return [currentTenant(), currentWorkSignal()];
        });
        const own = await runForTenant(
          'org-c',
          async () => (await Promise.resolve(), currentWorkSignal()),
          inner.signal,
        );
        return { later, nested, own, after: currentWorkSignal() };
      },
      outer.signal,
    );
    expect(seen.later).toBe(outer.signal);
    expect(seen.nested).toEqual(['org-b', outer.signal]);
    expect(seen.own).toBe(inner.signal);
    expect(seen.after).toBe(outer.signal);
    expect(await runForTenant('org-a', async () => (await Promise.resolve(), currentWorkSignal()))).toBeUndefined();
    expect(currentWorkSignal()).toBeUndefined();
  });

  it('lets work see the abort of its own signal only', async () => {
    const a = new CancelController();
    const b = new CancelController();
    const gate = new Promise<void>((resolve) => setImmediate(resolve));
    const read = async (): Promise<boolean | undefined> => (await gate, currentWorkSignal()?.aborted);
    const both = Promise.all([runForTenant('x', read, a.signal), runForTenant('x', read, b.signal)]);
    a.abort();
    expect(await both).toEqual([true, false]);
  });
});
