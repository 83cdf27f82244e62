/**
 * Times every model upstream call for the operators' metrics: the whole reply (a stream until its last byte) by
 * upstream host and status, and for streams the time to their first body bytes (the first token). A decorator
 * around the transport, so the upstream client and its retries stay as they are.
 */
import type { Transport } from './http-transport';

export interface UpstreamTimings {
  /** One call ended: its status (`error` when it failed before a status) and seconds taken. */
  observeCall(host: string, status: string, seconds: number): void;
  /** A stream sent its first body bytes after `seconds`. */
  observeFirstByte(host: string, seconds: number): void;
}

export function measuredTransport(transport: Transport, timings: UpstreamTimings): Transport {
  return async (url, init) => {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    const host = url.host;
    let response;
    try {
      response = await transport(url, init);
    } catch (error) {
      timings.observeCall(host, 'error', seconds());
      throw error;
    }
    const status = String(response.status);
    const { stream } = response;
    if (!stream) {
      timings.observeCall(host, status, seconds());
      return response;
    }
    // Seen where the transport feeds the stream: a 'data' listener would switch it to flowing mode under its reader.
    const push = stream.push.bind(stream);
    let first = true;
    stream.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
      if (first && chunk !== null) {
        first = false;
        timings.observeFirstByte(host, seconds());
      }
      return push(chunk, encoding);
    };
    stream.once('close', () => timings.observeCall(host, status, seconds()));
    return response;
  };
}
