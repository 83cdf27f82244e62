/**
 * The deterministic planner: what plans a run when no upstream chat model is configured for the agent model.
 *
 * It reads the task, not the words: each media input gets the reading tool of its modality (image → ocr_image,
 * PDF → read_document, video → sample_video_frames, audio → probe_audio, or transcribe_audio when the server has a
 * transcription model), then, when a response schema was asked, fill_json_schema over every layout read plus the
 * text inputs and transcripts; the answer is the filled object, or without a schema what was read. It never writes prose, so it serves only what those two answers are answers to:
 *
 * - with a schema (the request's or a skill's), any instruction but one that needs language understanding
 *   (summarise, translate, classify…): the filled schema is the answer;
 * - without one, no instruction, or one that asks for the reading itself ("read", "OCR", "transcribe"): what was
 *   read is the answer.
 *
 * Anything else — a question ("Which store issued this receipt?", "And the total?"), a remark ("Thanks!") — is
 * refused with a message that says what it can do offline and what to configure, never answered with the OCR text.
 */
import {
  PlannerRefusal,
  type PlanRequest,
  type PlanStep,
  type PlannerInput,
  type PlannerMessage,
  type PlannerModel,
  type PlannerToolCall,
} from '../sdk';

export const DETERMINISTIC_PLANNER_ID = 'deterministic-planner';

/** Instructions the planner can carry out without understanding language: they all mean "read and extract". */
const NEEDS_LANGUAGE =
  /\b(summari[sz]e|summary|explain|translate|write|compose|draft|classify|categori[sz]e|why|should|recommend|answer|compare|analy[sz]e|describe|reason|decide|judge|evaluate|rewrite|generate|suggest|predict|sentiment|opinion|critique|review|question)\b/i;

/** Instructions whose answer is the reading itself (without a schema, what was read is all it returns). */
const ASKS_FOR_READING =
  /\b(read|ocr|transcribe|transcription|transcript|scan|digiti[sz]e|raw text|plain text|probe|frames|(?:extract|get|return|dump|show|give me)\s+(?:all\s+|the\s+)?(?:raw\s+|plain\s+|full\s+)?text)\b/i;

/** What a chat turn's prompt carries besides the user's words: `[attached image: input message0.image0]`. */
const ATTACHMENT_NOTE = /\[attached [^\]]*\]/g;

/** The longest quote of the instruction a refusal repeats. */
const QUOTE_CHARS = 120;

export const CONFIGURE_HINT =
  'Configure an upstream chat model with tool calling in PRISM_MODELS_FILE (any `models:` entry with ' +
  '`engine: {kind: upstream, ...}` plans the agent models; one with id prism-orion-1 or prism-orion-2 is used for that one).';

export const DETERMINISTIC_MESSAGE =
  'No language model planned this run: the deterministic planner chose the tools from the inputs’ modalities and ' +
  'the requested schema. ' +
  CONFIGURE_HINT;

/** The longest `instructions` fill_json_schema takes. */
const MAX_FILL_INSTRUCTIONS = 4000;

const READER: Record<string, { tool: string; arg: string } | undefined> = {
  image: { tool: 'ocr_image', arg: 'image' },
  document: { tool: 'read_document', arg: 'document' },
  video: { tool: 'sample_video_frames', arg: 'video' },
  audio: { tool: 'probe_audio', arg: 'audio' },
};

/** The planner's reading tool for speech when the server has a transcription model. */
const SPEECH_READER = { tool: 'transcribe_audio', arg: 'audio' };

export interface DeterministicPlannerOptions {
  /** The server has a transcription model: audio is read with transcribe_audio (when the run has it). */
  transcribes?: boolean;
}

export function createDeterministicPlanner(options: DeterministicPlannerOptions = {}): PlannerModel {
  return {
    kind: 'deterministic',
    servedBy: DETERMINISTIC_PLANNER_ID,
    async plan(request) {
      return planNext(request, options.transcribes === true);
    },
  };
}

function planNext(request: PlanRequest, transcribes: boolean): PlanStep {
  const { task, messages } = request;
  const available = new Set(request.tools.map((t) => t.name));
  const usage = { inputTokens: 0, outputTokens: 0, costMicros: 0 };
  const turns = messages.filter((m) => m.role === 'assistant').length;
  const results = toolResults(messages);

  if (turns === 0) {
    refuseIfNeedsLanguage(task);
    const reads = readingCalls(task.inputs, available, transcribes);
    if (reads.length > 0) return { content: null, toolCalls: reads, usage };
  }
  const filled = results.find((r) => r.name === 'fill_json_schema');
  if (task.responseSchema && !filled) {
    if (!available.has('fill_json_schema')) {
      throw new PlannerRefusal(
        'The task asks for a JSON schema but fill_json_schema is not among the selected tools (config.tools).',
      );
    }
    const layoutIds = results.flatMap((r) => layoutIdsOf(r.output));
    const transcripts = results
      .filter((r) => r.name === SPEECH_READER.tool && typeof r.output?.text === 'string')
      .map((r) => r.output!.text as string);
    const text = task.inputs
      .map((i) => (i.kind === 'text' ? i.text : i.kind === 'json' && typeof i.value === 'string' ? i.value : null))
      .filter((t): t is string => t !== null)
      .concat(transcripts)
      .join('\n');
    const args: Record<string, unknown> = { json_schema: task.responseSchema, layout_ids: layoutIds };
    if (text) args.text = text;
    // A generate request run through the runtime fills the schema as the extraction engine would: same domain
    // hint, same skill instructions (the tool takes at most MAX_FILL_INSTRUCTIONS characters of them).
    const instructions = task.prompt ?? task.extraction?.instructions ?? null;
    if (instructions) args.instructions = instructions.slice(0, MAX_FILL_INSTRUCTIONS);
    if (task.extraction?.domain) args.domain = task.extraction.domain;
    return { content: null, toolCalls: [{ id: callId(turns, 0), name: 'fill_json_schema', arguments: args }], usage };
  }
  const response = filled ? (filled.output?.data ?? {}) : readingSummary(task.inputs, results);
  return { content: JSON.stringify(response), toolCalls: [], usage };
}

function refuseIfNeedsLanguage(task: PlanRequest['task']): void {
  const hasSchema = task.responseSchema !== null;
  const media = task.inputs.some((i) => i.kind === 'media');
  const prompt = (task.prompt ?? '').replace(ATTACHMENT_NOTE, ' ').replace(/\s+/g, ' ').trim();
  const words = prompt.match(NEEDS_LANGUAGE)?.[0];
  if (words) {
    throw new PlannerRefusal(
      `The instruction asks to "${words}", which needs a language model; the deterministic planner only reads ` +
        `inputs (OCR, document text, video frames, audio speech segments) and fills a JSON schema. ${CONFIGURE_HINT}`,
    );
  }
  if (!media && !hasSchema) {
    throw new PlannerRefusal(
      'There is nothing the deterministic planner can do: no image, document, video or audio input and no ' +
        `json_schema to fill. ${CONFIGURE_HINT}`,
    );
  }
  if (!hasSchema && prompt !== '' && !(ASKS_FOR_READING.test(prompt) && !prompt.includes('?'))) {
    const quoted = prompt.length > QUOTE_CHARS ? `${prompt.slice(0, QUOTE_CHARS - 1)}…` : prompt;
    const schemaField = task.chat ? 'response_format {type: "json_schema"}' : 'config.json_schema';
    throw new PlannerRefusal(
      `The deterministic planner cannot answer "${quoted}": without a language model it only reads inputs (OCR of ` +
        'images, document text, video frames, audio speech segments) and fills a JSON schema. For values such as ' +
        `a total or a name, send a schema naming them (${schemaField}, or a skill with a schema); to have the raw ` +
        `reading, ask to "read" the input. For questions and conversation, ${lowerFirst(CONFIGURE_HINT)}`,
    );
  }
}

const lowerFirst = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1);

function readingCalls(inputs: PlannerInput[], available: Set<string>, transcribes: boolean): PlannerToolCall[] {
  const calls: PlannerToolCall[] = [];
  for (const input of inputs) {
    if (input.kind !== 'media') continue;
    const speech = input.family === 'audio' && transcribes && available.has(SPEECH_READER.tool);
    const reader = speech ? SPEECH_READER : READER[input.family];
    if (!reader) {
      throw new PlannerRefusal(
        `Input '${input.slot}' is not an image, PDF, video or audio file this planner can read.`,
      );
    }
    if (!available.has(reader.tool)) {
      throw new PlannerRefusal(
        `Input '${input.slot}' needs the ${reader.tool} tool, which the run's tools leave out (config.tools, ` +
          `toolsets, or the toolsets of the skill's prism.yaml).`,
      );
    }
    calls.push({ id: callId(0, calls.length), name: reader.tool, arguments: { [reader.arg]: input.source } });
  }
  return calls;
}

interface ToolResult {
  name: string;
  output: Record<string, unknown> | null;
}

function toolResults(messages: PlannerMessage[]): ToolResult[] {
  return messages.flatMap((m) => {
    if (m.role !== 'tool') return [];
    const parsed = JSON.parse(m.content) as Record<string, unknown> | null;
    if (parsed && typeof parsed.error === 'string' && Object.keys(parsed).length === 1) {
      throw new PlannerRefusal(`The ${m.name} tool failed: ${parsed.error}`);
    }
    return [{ name: m.name, output: parsed }];
  });
}

function layoutIdsOf(output: Record<string, unknown> | null): string[] {
  const id = output?.layout_id;
  return typeof id === 'string' ? [id] : [];
}

/** Without a schema: what each input reads as, keyed by slot (text, pages, frames, audio facts). */
function readingSummary(inputs: PlannerInput[], results: ToolResult[]): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  let next = 0;
  for (const input of inputs) {
    if (input.kind !== 'media') {
      summary[input.slot] = input.kind === 'text' ? input.text : input.value;
      continue;
    }
    const out = results[next]?.output ?? null;
    next += 1;
    summary[input.slot] = describeRead(input.family, out);
  }
  return summary;
}

function describeRead(family: string, out: Record<string, unknown> | null): unknown {
  if (!out) return null;
  if (family === 'image') {
    const page = out.page as { text?: string } | undefined;
    return { type: 'image', text: page?.text ?? '', layout_id: out.layout_id ?? null };
  }
  if (family === 'document') {
    const pages = (out.pages as { index: number; text: string; status: string }[] | undefined) ?? [];
    return {
      type: 'document',
      page_count: out.page_count,
      pages: pages.map((p) => ({ index: p.index, status: p.status, text: p.text })),
      layout_id: out.layout_id ?? null,
    };
  }
  if (family === 'video') {
    return {
      type: 'video',
      duration_s: out.duration_s,
      has_audio: out.has_audio,
      scene_changes_s: out.scene_changes_s,
      frames: out.frames,
    };
  }
  return { type: 'audio', ...out };
}

const callId = (turn: number, index: number): string => `call_${turn}_${index}`;
