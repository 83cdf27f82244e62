/**
 * Turns the hub's field lists (name, type, description, required, nullable, enums, nested fields) into JSON
 * Schema, the form every caller and the extractor work with. Types seen in the data: string, number, integer,
 * boolean, enum, object, `array<T>`, `map<string,T>`, unions such as `number | string` and `string|null`.
 */

export interface HubField {
  name: string;
  type: string;
  description?: string | null;
  required?: boolean;
  nullable?: boolean;
  format?: string;
  enum?: unknown[];
  item_enum?: unknown[];
  minimum?: number;
  maximum?: number;
  object_name?: string;
  fields?: HubField[];
  item_fields?: HubField[];
}

type Schema = Record<string, unknown>;

/** The JSON schema of an object whose properties are `fields`. */
export function objectSchema(fields: HubField[], title?: string | null, description?: string | null): Schema {
  const schema: Schema = { type: 'object' };
  if (title) schema.title = title;
  if (description) schema.description = description;
  schema.properties = Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)]));
  const required = fields.filter((f) => f.required).map((f) => f.name);
  if (required.length > 0) schema.required = required;
  return schema;
}

function fieldSchema(field: HubField): Schema {
  const parts = field.type.split('|').map((t) => t.trim());
  const nullable = field.nullable === true || parts.includes('null');
  const variants = parts.filter((t) => t !== 'null').map((t) => typeSchema(t, field));
  let schema: Schema = variants.length === 1 ? (variants[0] ?? {}) : { anyOf: variants };
  if (nullable) schema = { anyOf: [schema, { type: 'null' }], default: null };
  if (field.description) schema.description = field.description;
  return schema;
}

function typeSchema(type: string, field: HubField): Schema {
  const array = /^array<(.+)>$/.exec(type);
  if (array?.[1]) return { type: 'array', items: typeSchema(array[1], { ...field, enum: field.item_enum ?? [] }) };
  const map = /^map<\s*string\s*,\s*(.+)>$/.exec(type);
  if (map?.[1]) return { type: 'object', additionalProperties: typeSchema(map[1], field) };
  switch (type) {
    case 'object': {
      const nested = field.fields ?? field.item_fields;
      return nested ? objectSchema(nested, field.object_name) : { type: 'object' };
    }
    case 'enum':
      return { type: 'string', enum: field.enum ?? field.item_enum ?? [] };
    case 'string':
      return withBounds({ type: 'string', ...(field.format ? { format: field.format } : {}) }, field);
    case 'number':
    case 'integer':
      return withBounds({ type }, field);
    case 'boolean':
      return { type: 'boolean' };
    default:
      return {};
  }
}

function withBounds(schema: Schema, field: HubField): Schema {
  if (field.enum && field.enum.length > 0) schema.enum = field.enum;
  if (field.minimum !== undefined) schema.minimum = field.minimum;
  if (field.maximum !== undefined) schema.maximum = field.maximum;
  return schema;
}
