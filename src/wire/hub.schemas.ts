/**
 * Wire shapes of the hub: a domain's catalogue entry, as `GET /v1/hub/domains` (and `/v1/domains`) and the MCP
 * tool `list_hub_domains` both answer it. The schema types the MCP tool's output; the mapper serves both.
 */
import { z } from 'zod';
import type { HubDomain } from '../services/hub/hub.service';

export const domainInfoSchema = z.object({
  domain: z.string(),
  name: z.string(),
  description: z.string(),
  supported_inputs: z.array(z.string()),
  tags: z.array(z.string()),
  sample_data: z.array(z.string()),
  schema_hash: z.string(),
});

/** The entry of `GET /v1/hub/domains`. */
export const toDomainInfo = (d: HubDomain): z.output<typeof domainInfoSchema> => ({
  domain: d.domain,
  name: d.name,
  description: d.description,
  supported_inputs: d.supportedInputs,
  tags: d.tags,
  sample_data: d.sampleData,
  schema_hash: d.schemaHash,
});
