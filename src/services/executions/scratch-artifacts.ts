/**
 * A ToolContext whose artifact writes stay in memory, for runs whose output must leave nothing behind (the
 * evaluations rerun of an execution). Tools still write layouts, rendered pages and the like and read them back by
 * object id (through `artifacts` or `media`) within the run; other ids fall through to the real context. The bytes
 * are dropped with the context when the run ends.
 */
import type { ArtifactRef, LoadedMedia, ToolContext } from '../../agents/sdk';
import { sniffMediaType } from '../../lib/media-type';
import { newObjectId } from '../artifacts.service';

/** Wraps contexts over one shared map, so every context of a run (one per step) sees the run's writes. */
export function scratchArtifacts(): (ctx: ToolContext) => ToolContext {
  const kept = new Map<string, ArtifactRef & { bytes: Buffer }>();
  return (ctx) => ({ ...ctx, ...scratchPorts(ctx, kept) });
}

function scratchPorts(
  ctx: ToolContext,
  kept: Map<string, ArtifactRef & { bytes: Buffer }>,
): Pick<ToolContext, 'artifacts' | 'media'> {
  return {
    artifacts: {
      async write(artifact) {
        let objectId = newObjectId(artifact.kind);
        while (kept.has(objectId)) objectId = newObjectId(artifact.kind);
        const ref: ArtifactRef = {
          objectId,
          filename: artifact.filename,
          mimeType: artifact.mimeType,
          sizeBytes: artifact.bytes.length,
        };
        kept.set(objectId, { ...ref, bytes: artifact.bytes });
        return ref;
      },
      async read(objectId) {
        return kept.get(objectId) ?? ctx.artifacts.read(objectId);
      },
      async list() {
        const own = [...kept.values()].map(({ bytes: _bytes, ...ref }) => ref);
        return [...(await ctx.artifacts.list()), ...own];
      },
    },
    media: {
      async load(source): Promise<LoadedMedia> {
        const artifact = kept.get(source.trim());
        if (!artifact) return ctx.media.load(source);
        const family = sniffMediaType(artifact.bytes).family;
        return { bytes: artifact.bytes, mimeType: artifact.mimeType, family, filename: artifact.filename };
      },
    },
  };
}
