/**
 * The stdio transport of `prism mcp`: newline-delimited JSON-RPC on stdin/stdout, like the SDK's
 * StdioServerTransport but one that survives what a client sends. The SDK's closes the whole server when a message
 * passes its 10 MiB buffer (the client only sees "Connection closed") and answers nothing to a line that is not
 * JSON. Here:
 * - a message longer than `maxMessageBytes` (PRISM_MCP_MAX_JSON_BYTES, as on `/mcp`) is skipped up to its newline
 *   without being kept, and answered with a JSON-RPC error (-32600) carrying its `id` when one can be read from its
 *   first bytes, so the client's request fails with a reason instead of hanging;
 * - a line that is not JSON gets -32700 (Parse error), and JSON that is not a JSON-RPC message -32600, id null;
 * the server keeps serving after each.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** How much of a too-long message is kept to find its id. */
const HEAD_BYTES = 4096;

export class LimitedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private length = 0;
  /** Set while skipping the rest of a message over the limit: its first bytes, for the id. */
  private skipping: Buffer | null = null;
  /** The last bytes of the message being skipped (the SDK clients write `"id"` last). */
  private tail: Buffer = Buffer.alloc(0);
  private skippedBytes = 0;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxMessageBytes: number,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.chunks = [];
    this.length = 0;
    this.skipping = null;
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  private readonly onInputError = (error: Error): void => this.onerror?.(error);

  private readonly onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    while (data.length > 0) {
      const newline = data.indexOf(10);
      const part = newline === -1 ? data : data.subarray(0, newline);
      if (this.skipping) {
        this.skippedBytes += part.length;
        this.tail = lastBytes(Buffer.concat([this.tail, part]));
      } else if (this.length + part.length > this.maxMessageBytes) {
        const whole = Buffer.concat([...this.chunks, part]);
        this.skippedBytes = whole.length;
        this.skipping = Buffer.from(whole.subarray(0, HEAD_BYTES));
        this.tail = Buffer.from(lastBytes(whole));
        this.chunks = [];
        this.length = 0;
      } else {
        this.chunks.push(part);
        this.length += part.length;
      }
      if (newline === -1) return;
      this.endOfLine();
      data = data.subarray(newline + 1);
    }
  };

  private endOfLine(): void {
    if (this.skipping) {
      const head = this.skipping.toString('utf8');
      const tail = this.tail.toString('utf8');
      const bytes = this.skippedBytes;
      this.skipping = null;
      this.tail = Buffer.alloc(0);
      this.skippedBytes = 0;
      this.refuse(
        idOf(head, tail),
        INVALID_REQUEST,
        `Message too large: ${bytes} bytes, over the ${this.maxMessageBytes}-byte limit of prism mcp ` +
          '(PRISM_MCP_MAX_JSON_BYTES). Pass a local file as `path` instead of base64 `data`.',
      );
      return;
    }
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.length = 0;
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.refuse(null, PARSE_ERROR, 'Parse error: the line is not valid JSON.');
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) {
      const id = (parsed as { id?: unknown } | null)?.id;
      this.refuse(
        typeof id === 'string' || typeof id === 'number' ? id : null,
        INVALID_REQUEST,
        'Invalid Request: not a JSON-RPC 2.0 message.',
      );
      return;
    }
    this.onmessage?.(message.data);
  }

  private refuse(id: string | number | null, code: number, message: string): void {
    // JSON-RPC 2.0 answers a request it cannot read with id null; the SDK's schema types ids as string | number.
    void this.send({ jsonrpc: '2.0', id: id as string | number, error: { code, message } });
  }
}

const ID = String.raw`"id"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?\d+))`;
/** `"id": …}` closing the message (where the SDK clients write it). */
const ID_AT_END = new RegExp(`${ID}\\s*\\}\\s*$`);
/** `{"id": …` or `{"jsonrpc": "2.0", "id": …` opening it (where most other clients do). */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?` + ID);

/** The top-level `id` of a JSON-RPC message from its first and last bytes, if it can be read there. */
export function idOf(head: string, tail: string): string | number | null {
  const found = ID_AT_END.exec(tail) ?? ID_AT_START.exec(head);
  if (!found) return null;
  if (found[1] !== undefined) return JSON.parse(`"${found[1]}"`) as string;
  return Number(found[2]);
}

const lastBytes = (buffer: Buffer): Buffer =>
  buffer.length > HEAD_BYTES ? buffer.subarray(buffer.length - HEAD_BYTES) : buffer;
