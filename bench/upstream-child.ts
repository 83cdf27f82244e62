/**
 * The scripted OpenAI-compatible upstream as its own process, for the gateway benchmark: a real upstream is another
 * machine, so it must not share the gateway's event loop. Two models: `bench-upstream` answers at once (a CPU-bound
 * worst case for the hop) and `bench-upstream-slow` waits `argv[2]` ms before its first chunk, as a (very fast)
 * real model would. Prints its base URL on the first stdout line.
 */
import { startScriptedUpstream } from '../test/helpers/scripted-upstream';

async function main(): Promise<void> {
  const serviceMs = Number(process.argv[2] ?? 0);
  const upstream = await startScriptedUpstream();
  const reply = {
    kind: 'stream' as const,
    chunks: ['Hello', ' from', ' the', ' bench'],
    usage: { prompt_tokens: 12, completion_tokens: 4 },
  };
  upstream.forModel('bench-upstream', reply);
  upstream.forModel('bench-upstream-slow', { ...reply, firstChunkDelayMs: serviceMs });
  // Forget recorded requests so memory stays flat under load.
  setInterval(() => upstream.requests.splice(0), 1000).unref();
  console.log(upstream.baseUrl);
  process.on('SIGTERM', () => void upstream.close().then(() => process.exit(0)));
}

void main();
