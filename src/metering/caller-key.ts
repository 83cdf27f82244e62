/**
 * Who a request counts against: the user account for a valid key, the client address for anonymous callers.
 *
 * IPv6 addresses are bucketed by their /56 prefix (what one home or small office is usually given), so a caller
 * cannot mint a fresh budget per address from its own range; IPv4-mapped IPv6 addresses count as the IPv4 address.
 */
import net from 'node:net';
import type { Principal } from '../domain/account';

/** The rate-limit and guest-spend key for a caller: `user:<id>` or `ip:<address or /56 prefix>`. */
export function callerKey(principal: Principal): string {
  return principal.kind === 'user' ? `user:${principal.userId}` : `ip:${clientAddressKey(principal.clientIp)}`;
}

/** An IPv4 address as is; an IPv6 address as its /56 prefix (`2001:db8:0:ab00::/56`). */
export function clientAddressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  if (net.isIPv6(address)) return `${ipv6Prefix56(address)}/56`;
  return address;
}

function ipv6Prefix56(address: string): string {
  const [head = '', tail = ''] = address.split('%')[0]?.split('::') ?? [];
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right].map((g) =>
    parseInt(g || '0', 16),
  );
  const kept = [groups[0] ?? 0, groups[1] ?? 0, groups[2] ?? 0, (groups[3] ?? 0) & 0xff00];
  return `${kept.map((g) => g.toString(16)).join(':')}::`;
}
