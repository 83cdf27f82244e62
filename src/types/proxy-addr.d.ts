/** The one function of `proxy-addr` (express's own client-address resolver) the gateway fast lane calls. */
declare module 'proxy-addr' {
  import type { IncomingMessage } from 'node:http';
  function proxyaddr(req: IncomingMessage, trust: (addr: string, index: number) => boolean): string;
  export = proxyaddr;
}
