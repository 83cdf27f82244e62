/**
 * The scripted OpenAI-compatible upstream as its own process, for the gateway benchmark: a real upstream is another
 * machine, so it must not share the gateway's event loop. Prints its base URL on the first stdout line.
 */
import { startScriptedUpstream } from '../test/helpers/scripted-upstream';

async function main(): Promise<void> {
  const upstream = await startScriptedUpstream();
  upstream.forModel('bench-upstream', {
    kind: 'stream',
    chunks: ['Hello', ' from', ' the', ' bench'],
    usage: { prompt_tokens: 12, completion_tokens: 4 },
  });
  // Forget recorded requests so memory stays flat under load.
  setInterval(() => upstream.requests.splice(0), 1000).unref();
  console.log(upstream.baseUrl);
  process.on('SIGTERM', () => void upstream.close().then(() => process.exit(0)));
}

void main();
