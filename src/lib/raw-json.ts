/**
 * A JSON value kept as the text it arrived in, so a relay can pass it on without parsing and re-serialising it.
 *
 * The gateway's streamed path relays an upstream's chunks this way (it reads only what billing needs from the
 * text), and the SSE writer writes such a value's text as the frame's data unchanged. The text is trusted to be
 * one JSON value on one line: whoever wraps it checked that much (see src/gateway/upstream/relay-text.ts).
 */
export class RawJson {
  constructor(readonly text: string) {}
}
