/**
 * Writes zips byte by byte for tests, including the hostile ones no well-behaved library would make: `..` and
 * absolute names, symlink entries, entries flagged encrypted, duplicate names, and headers that lie about sizes.
 * (Only tests write zips this way; Prism itself reads with yauzl and writes with yazl.)
 */
import zlib from 'node:zlib';

export interface CraftedEntry {
  name: string;
  data?: Buffer | string;
  /** Deflate (default) or store. */
  method?: 'deflate' | 'store';
  /** Unix mode in the external attributes (e.g. 0o120777 for a symlink). */
  unixMode?: number;
  /** Sets the "encrypted" flag bit (the data is not actually encrypted). */
  encrypted?: boolean;
  /** Uncompressed size written in the headers instead of the real one. */
  declaredSize?: number;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export function craftZip(entries: CraftedEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data ?? '', 'utf8');
    const method = entry.method ?? 'deflate';
    const body = method === 'deflate' ? zlib.deflateRawSync(data) : data;
    const crc = crc32(data);
    const size = entry.declaredSize ?? data.length;
    const flags = 0x0800 | (entry.encrypted ? 0x0001 : 0);
    const methodCode = method === 'deflate' ? 8 : 0;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(methodCode, 8);
    local.writeUInt32LE(0, 10);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, body);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(methodCode, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.unixMode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A minimal valid SKILL.md. */
export function skillMd(name: string, description = `The ${name} skill.`, body = 'Extract the fields.'): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;
}
