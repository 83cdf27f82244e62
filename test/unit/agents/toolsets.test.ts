/**
 * Toolsets cover every built-in tool exactly once, and a run's tools are the union of its toolsets (with core)
 * and its exact tool names; unknown names are refused.
 */
import { createToolRegistry } from '../../../src/agents/tool-registry';
import { checkToolsets, selectRunTools, TOOLSETS, toolsetOf } from '../../../src/agents/toolsets';
import { BUILTIN_TOOLS } from '../../../tools';

const registry = createToolRegistry(BUILTIN_TOOLS);
const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();

describe('toolsets', () => {
  it('puts every built-in tool in exactly one toolset and names no tool that does not exist', () => {
    for (const tool of BUILTIN_TOOLS) {
      expect(Object.values(TOOLSETS).filter((set) => set.includes(tool.name))).toHaveLength(1);
    }
    for (const tool of Object.values(TOOLSETS).flat()) expect(registry.get(tool)).toBeDefined();
    expect(toolsetOf('ocr_image')).toBe('image');
  });

  it('selects the union of toolsets (with core) and exact names; nothing named selects every tool', () => {
    expect(names(selectRunTools(registry, null, null))).toEqual(names(registry.list()));
    expect(names(selectRunTools(registry, ['ocr_image'], null))).toEqual(['ocr_image']);
    expect(names(selectRunTools(registry, ['fetch_url'], ['video']))).toEqual(
      [...TOOLSETS.core!, 'sample_video_frames', 'fetch_url'].sort(),
    );
  });

  it('refuses unknown toolsets and tools, naming them', () => {
    expect(() => checkToolsets(['core', 'nope'])).toThrow("Unknown toolset 'nope'");
    expect(() => checkToolsets(['world-gen'])).toThrow('not provided');
    expect(() => selectRunTools(registry, ['nope_tool'], ['core'])).toThrow("'nope_tool'");
  });
});
