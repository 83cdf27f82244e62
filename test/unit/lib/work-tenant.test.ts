import { currentTenant, runForTenant } from '../../../src/lib/work-tenant';

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
});
