/**
 * Every built-in tool, in the order planners and MCP clients list them. Adding a tool = one `*.tool.ts` file plus
 * one line here.
 */
import type { AnyToolDefinition } from '../src/agents/sdk';
import { fetchUrlTool } from './fetch-url.tool';
import { fillJsonSchemaTool } from './fill-json-schema.tool';
import { lookupHubDomainTool } from './lookup-hub-domain.tool';
import { ocrImageTool } from './ocr-image.tool';
import { probeAudioTool } from './probe-audio.tool';
import { readArtifactTool } from './read-artifact.tool';
import { readDocumentTool } from './read-document.tool';
import { readSkillFileTool } from './read-skill-file.tool';
import { recallTool } from './recall.tool';
import { rememberTool } from './remember.tool';
import { renderPageTool } from './render-page.tool';
import { sampleVideoFramesTool } from './sample-video-frames.tool';
import { transcribeAudioTool } from './transcribe-audio.tool';
import { writeArtifactTool } from './write-artifact.tool';

export const BUILTIN_TOOLS: readonly AnyToolDefinition[] = [
  ocrImageTool,
  readDocumentTool,
  renderPageTool,
  sampleVideoFramesTool,
  probeAudioTool,
  transcribeAudioTool,
  fillJsonSchemaTool,
  lookupHubDomainTool,
  readSkillFileTool,
  readArtifactTool,
  writeArtifactTool,
  fetchUrlTool,
  rememberTool,
  recallTool,
];
