import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { settleHeap } from '../../../src/lib/settle-heap';

describe('settleHeap', () => {
  it('runs one full (major) collection, without --expose-gc on the command line', async () => {
    const globalGcBefore = (globalThis as { gc?: unknown }).gc;
    const seen: PerformanceEntry[] = [];
    const observer = new PerformanceObserver((list) => seen.push(...list.getEntries()));
    observer.observe({ entryTypes: ['gc'] });
    const ms = settleHeap();
    // GC entries are delivered asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    expect(ms).toBeGreaterThanOrEqual(0);
    const kinds = seen.map((entry) => ((entry as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind);
    expect(kinds).toContain(constants.NODE_PERFORMANCE_GC_MAJOR);
    // The global scope is left as it was: only the throwaway context saw `gc`.
    expect((globalThis as { gc?: unknown }).gc).toBe(globalGcBefore);
  });
});
