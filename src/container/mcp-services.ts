/**
 * What the MCP adapter is given from the built container: the services its tools call, the skill prompts, how
 * inputs are read, and the agent tool registry. Picked here, on the composition side, so src/mcp never names the
 * container (the HTTP route in src/app.ts and `prism mcp` in src/cli both take it from here).
 */
import fs from 'node:fs';
import { loadSkillPrompts } from '../mcp/mcp-prompts';
import type { McpServices } from '../mcp/mcp-server';
import type { Container } from './index';

/** The MCP adapter's view of the composition root: the services it calls, with inputs read as the API reads them. */
export function mcpServicesOf(container: Container): McpServices {
  const { files, predictions, hub, skills } = container.services;
  return {
    predictions,
    files,
    hub,
    skills,
    executions: container.agents.executions,
    prompts: loadSkillPrompts(container.config.skills.builtinDir, container.logger),
    inputs: {
      openFile: async (principal, fileId) => {
        const { file, stream } = await files.openContent(principal, fileId);
        return { filename: file.filename, stream };
      },
      fetch: container.config.fetch,
    },
    agents: { registry: container.agents.tools, toolContext: container.agents.toolContext, skills },
    // Written by the container at start (readOrCreateSecret) when PRISM_SECRET is not set.
    signingSecret: container.config.auth.secret ?? fs.readFileSync(container.config.data.secretPath, 'utf8').trim(),
  };
}
