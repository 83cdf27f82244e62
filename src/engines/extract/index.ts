/**
 * Public surface of the schema-guided extractor: fill a JSON schema from a document layout, or propose a schema
 * from what a document prints. Everything else in this folder is an implementation detail of these two calls, except
 * what the receipts bench needs to fit and ablate them (the last block: the business-name candidates and weights, and
 * the names of the rules it can switch off).
 */
export {
  createFieldExtractor,
  extractFromLayout,
  type ExtractOptions,
  type FieldExtractor,
} from './field-extractor.engine';
export { proposeSchema } from './schema-proposer';

// For bench/receipts-cv.ts.
export { createLayoutIndex } from './layout-index';
export { issuerChoices } from './issuer.finder';
export { NAME_FEATURES, NAME_WEIGHTS, type NameFeatures, type NameWeights } from './issuer-weights';
export { RULE_GROUPS, RULE_PARTS, RULES, type RuleGroup, type RuleName } from './rule-switches';
