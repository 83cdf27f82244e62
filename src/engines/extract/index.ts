/**
 * Public surface of the schema-guided extractor: fill a JSON schema from a document layout, or propose a schema
 * from what a document prints. Everything else in this folder is an implementation detail of these two calls.
 */
export {
  createFieldExtractor,
  extractFromLayout,
  type ExtractOptions,
  type FieldExtractor,
} from './field-extractor.engine';
export { proposeSchema } from './schema-proposer';
export { createLayoutIndex } from './layout-index';
export { issuerChoices } from './issuer.finder';
export { NAME_FEATURES, NAME_WEIGHTS, type NameFeatures, type NameWeights } from './issuer-weights';
export { RULES, type RuleName } from './rule-switches';
