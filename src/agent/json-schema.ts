/**
 * A validator for the JSON Schema subset that tool parameters use in practice (type, properties,
 * required, enum, const, items, bounds, additionalProperties). ajv is only a transitive dependency
 * of fastify, so importing it would break the day fastify drops it; this covers what models need.
 * Unknown keywords are ignored, as JSON Schema prescribes.
 */
export type JsonSchema = Record<string, unknown>;

export function validateJson(schema: JsonSchema, value: unknown, path = ''): string[] {
  const errors: string[] = [];
  const at = path || 'arguments';
  const types = schema.type === undefined ? undefined : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types && !types.some((t) => hasType(value, t))) {
    errors.push(`${at} must be ${types.join(' or ')}`);
    return errors;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => deepEqual(e, value))) {
    errors.push(`${at} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if ('const' in schema && !deepEqual(schema.const, value)) errors.push(`${at} must be ${JSON.stringify(schema.const)}`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${at} must be >= ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${at} must be <= ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) errors.push(`${at} must be > ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) errors.push(`${at} must be < ${schema.exclusiveMaximum}`);
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    if (typeof schema.minLength === 'number' && len < schema.minLength) errors.push(`${at} must have at least ${schema.minLength} characters`);
    if (typeof schema.maxLength === 'number' && len > schema.maxLength) errors.push(`${at} must have at most ${schema.maxLength} characters`);
    if (typeof schema.pattern === 'string' && !safeRegex(schema.pattern)?.test(value)) errors.push(`${at} must match ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) errors.push(`${at} must have at least ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) errors.push(`${at} must have at most ${schema.maxItems} items`);
    if (isObject(schema.items)) {
      value.forEach((item, i) => errors.push(...validateJson(schema.items as JsonSchema, item, `${at}[${i}]`)));
    }
  }
  if (isObject(value)) {
    const props = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
    for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
      if (!(name in value)) errors.push(`${path ? `${path}.` : ''}${name} is required`);
    }
    for (const [name, v] of Object.entries(value)) {
      const sub = props[name];
      const child = path ? `${path}.${name}` : name;
      if (sub && isObject(sub)) errors.push(...validateJson(sub, v, child));
      else if (schema.additionalProperties === false) errors.push(`${child} is not an allowed property`);
      else if (isObject(schema.additionalProperties)) errors.push(...validateJson(schema.additionalProperties as JsonSchema, v, child));
    }
  }
  return errors;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function safeRegex(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}
