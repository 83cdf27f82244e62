import type { ArtifactRef, LoadedMedia, ToolContext } from '../../../../src/agents/sdk';
import { scratchArtifacts } from '../../../../src/services/executions/scratch-artifacts';

/** A base context whose artifacts port records writes and knows one stored artifact. */
function baseContext(): { ctx: ToolContext; written: string[] } {
  const written: string[] = [];
  const stored: ArtifactRef & { bytes: Buffer } = {
    objectId: 'txt_stored',
    filename: 'stored.txt',
    mimeType: 'text/plain',
    sizeBytes: 3,
    bytes: Buffer.from('old'),
  };
  const ctx = {
    artifacts: {
      async write(artifact: { filename: string }) {
        written.push(artifact.filename);
        return { objectId: 'txt_real00', filename: artifact.filename, mimeType: 'text/plain', sizeBytes: 0 };
      },
      async read(objectId: string) {
        if (objectId === stored.objectId) return stored;
        throw new Error(`artifact ${objectId} not found`);
      },
      async list() {
        return [];
      },
    },
    media: {
      async load(source: string): Promise<LoadedMedia> {
        if (source === stored.objectId) {
          return { bytes: stored.bytes, mimeType: stored.mimeType, family: 'unknown', filename: stored.filename };
        }
        throw new Error(`file ${source} not found`);
      },
    },
  } as unknown as ToolContext;
  return { ctx, written };
}

describe('scratchArtifacts', () => {
  it('keeps writes in memory, shared by every context of the run, and falls through for other ids', async () => {
    const { ctx, written } = baseContext();
    const scratch = scratchArtifacts();
    const first = scratch(ctx);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const ref = await first.artifacts.write({
      kind: 'image',
      filename: 'page-1.png',
      mimeType: 'image/png',
      bytes: png,
    });
    expect(ref).toMatchObject({ filename: 'page-1.png', mimeType: 'image/png', sizeBytes: png.length });
    expect(ref.objectId).toMatch(/^img_[a-z0-9]{6}$/);
    expect(written).toEqual([]);

    const second = scratch(ctx);
    expect((await second.artifacts.read(ref.objectId)).bytes.equals(png)).toBe(true);
    expect(await second.media.load(ref.objectId)).toMatchObject({ family: 'image', mimeType: 'image/png' });
    expect((await second.artifacts.list()).map((a) => a.objectId)).toEqual([ref.objectId]);

    expect((await second.artifacts.read('txt_stored')).bytes.toString()).toBe('old');
    expect((await second.media.load('txt_stored')).filename).toBe('stored.txt');
    await expect(second.media.load('file-gone')).rejects.toThrow('file file-gone not found');

    // Another run's scratch space does not see this run's writes.
    await expect(scratchArtifacts()(ctx).artifacts.read(ref.objectId)).rejects.toThrow('not found');
  });
});
