/**
 * The words a language-model planner starts from: Prism's system prompt and the task written out (instruction,
 * named inputs with the ids tools accept, enabled skills, the response schema). The deterministic planner reads the
 * same task in structured form and ignores these words.
 */
import type { PlannerTask } from './sdk';

/** A skill's text as the planner sees it. */
export interface SkillBrief {
  name: string;
  description: string;
  instructions: string;
}

/** Skill instructions beyond this many characters are left to read_skill_file. */
const MAX_INSTRUCTIONS = 6000;

export const SYSTEM_PROMPT = [
  'You are Prism, an agent that reads images, documents, video and audio with tools and answers with JSON.',
  'Inputs are referenced by ids or URLs; pass them unchanged as tool arguments. Tool results are JSON.',
  'Call tools until you have what the task needs, then answer with one JSON object and no tool calls.',
  'Never invent values: if something cannot be found in the inputs, use null.',
].join('\n');

/** The system prompt of a chat turn: the same tools, but the reply is to a person. */
export const CHAT_SYSTEM_PROMPT = [
  'You are Prism, an agent that reads images, documents, video and audio with tools and talks with the user.',
  'Inputs are referenced by ids or URLs; pass them unchanged as tool arguments. Tool results are JSON.',
  "Call tools when the user's message needs what the inputs hold, then reply with no tool calls: in plain text",
  '(markdown allowed), or as one JSON object when a response schema is given.',
  'Never invent values: if something cannot be found in the inputs, say so.',
].join('\n');

export function describeTask(task: PlannerTask, skills: SkillBrief[]): string {
  const parts: string[] = [];
  if (task.chat) {
    if (task.chat.history.length > 0) {
      parts.push('Conversation so far:');
      for (const turn of task.chat.history) parts.push(`${turn.role}: ${turn.content}`);
    }
    parts.push(`The user's message: ${task.prompt ?? ''}`);
  } else {
    parts.push(`Task: ${task.prompt ?? 'Extract the information in the inputs.'}`);
  }
  if (task.inputs.length > 0) {
    parts.push('Inputs:');
    for (const input of task.inputs) {
      if (input.kind === 'media') parts.push(`- ${input.slot}: ${input.family} at "${input.source}"`);
      else if (input.kind === 'text') parts.push(`- ${input.slot} (text): ${input.text}`);
      else parts.push(`- ${input.slot} (json): ${JSON.stringify(input.value)}`);
    }
  }
  for (const skill of skills) {
    const body =
      skill.instructions.length > MAX_INSTRUCTIONS
        ? `${skill.instructions.slice(0, MAX_INSTRUCTIONS)}\n[… read the rest with read_skill_file]`
        : skill.instructions;
    parts.push(`Skill "${skill.name}": ${skill.description}\n${body}`);
  }
  if (task.goals.length > 0) {
    parts.push(`Work through these states in order: ${task.goals.join(' → ')}. Current state: ${task.goals[0]}.`);
  }
  if (task.responseSchema) {
    parts.push(`The final answer must be a JSON object matching this schema:\n${JSON.stringify(task.responseSchema)}`);
  }
  return parts.join('\n\n');
}
