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
