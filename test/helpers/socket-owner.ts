/**
 * Which process holds a TCP connection, from /proc (Linux): a test that must SIGKILL "the replica running this job"
 * finds it from the port its upstream call came from.
 */
import fs from 'node:fs';

/** The socket inodes of local TCP ports, from /proc/net/tcp and tcp6. */
function inodesOfLocalPort(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local) continue;
      if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) inodes.add(fields[9] ?? '');
    }
  }
  return inodes;
}

/** The pid among `pids` that owns the socket bound to local `port`, or null. */
export function pidOwningLocalPort(port: number, pids: readonly number[]): number | null {
  const inodes = inodesOfLocalPort(port);
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return pid;
      } catch {
        // The descriptor closed while we looked.
      }
    }
  }
  return null;
}
