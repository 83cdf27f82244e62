/**
 * Every built-in tool, in the order planners and MCP clients list them. Adding a tool = one `*.tool.ts` file plus
 * one line here.
 */
import type { AnyToolDefinition } from '../src/agents/sdk';
import { lookupHubDomainTool } from './lookup-hub-domain.tool';
import { ocrImageTool } from './ocr-image.tool';

export const BUILTIN_TOOLS: readonly AnyToolDefinition[] = [ocrImageTool, lookupHubDomainTool];
