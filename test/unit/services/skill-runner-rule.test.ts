/**
 * When a generate request with skills runs on the agent runtime (services/predictions/skill-runner.ts): skills that
 * declare toolsets or a graph, or an agent model as the request's model; and the one exception that keeps the
 * engine-built transcription when only the deterministic planner could run a transcription-based skill.
 */
import type { ParsedSkill, SkillConfig } from '../../../src/domain/skill';
import { callsForRuntime, directPathNote } from '../../../src/services/predictions/skill-runner';

function skill(config: Partial<SkillConfig> | null): ParsedSkill {
  return {
    record: {} as ParsedSkill['record'],
    frontMatter: {},
    instructions: '',
    schema: null,
    schemas: {},
    config: config
      ? {
          apiVersion: null,
          metadata: {},
          model: null,
          toolsets: [],
          graph: null,
          graphStates: [],
          plan: null,
          ...config,
        }
      : null,
    files: [],
    readFile: () => Promise.reject(new Error('no files')),
  };
}

describe('callsForRuntime', () => {
  it('is true for toolsets, a graph or an agent model, false otherwise', () => {
    expect(callsForRuntime([skill(null)], 'prism-1')).toBe(false);
    expect(callsForRuntime([skill({ model: 'prism-orion-1' })], 'prism-1')).toBe(false);
    expect(callsForRuntime([skill(null), skill({ toolsets: ['core'] })], 'prism-1')).toBe(true);
    expect(callsForRuntime([skill({ graphStates: ['Read', 'Fill'] })], 'vlm-1')).toBe(true);
    expect(callsForRuntime([skill(null)], 'prism-orion-2:pro')).toBe(true);
    expect(callsForRuntime([skill(null)], 'prism-orion-3')).toBe(false);
    expect(callsForRuntime([], 'prism-orion-1')).toBe(false);
  });
});

describe('directPathNote', () => {
  const deterministic = { model: 'prism-orion-1:auto', deterministic: true };
  it('keeps transcription skills on the engine only when the deterministic planner would plan unasked', () => {
    expect(directPathNote(deterministic, 'prism-1', 'video.transcription')).toContain('PRISM_MODELS_FILE');
    expect(directPathNote(deterministic, 'prism-1', 'audio.transcription')).toContain('audio.transcription');
    expect(directPathNote(deterministic, 'prism-1', 'document.receipt')).toBeNull();
    expect(directPathNote(deterministic, 'prism-1', null)).toBeNull();
    expect(directPathNote(deterministic, 'prism-orion-1', 'video.transcription')).toBeNull();
    expect(directPathNote({ ...deterministic, deterministic: false }, 'prism-1', 'video.transcription')).toBeNull();
  });
});
