/**
 * JSON Schema (the OpenAPI 3.1 dialect, as used by openapi.yaml) → TypeBox builder code.
 *
 * Only a known subset of keywords is translated. Pure annotations (description, examples, title, …)
 * are dropped; any other keyword fails the generation with the location of the offending schema,
 * so a validation rule in the contract can never be lost silently on its way to the validators.
 */

export type JsonSchema = Record<string, unknown>

/** A contract problem the generator refuses to paper over. `where` locates it in the document. */
export class OpenApiCodegenError extends Error {
  override name = 'OpenApiCodegenError'
  constructor(
    readonly where: string,
    problem: string,
  ) {
    super(`${where}: ${problem}`)
  }
}

// ---------------------------------------------------------------------------------------------
// TypeScript source rendering

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name)
}

/** A single-quoted TypeScript string literal. */
export function tsString(value: string): string {
  let out = "'"
  for (const char of value) {
    const code = char.codePointAt(0)!
    if (char === '\\') out += '\\\\'
    else if (char === "'") out += "\\'"
    else if (char === '\n') out += '\\n'
    else if (char === '\r') out += '\\r'
    else if (char === '\t') out += '\\t'
    else if (code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029) out += `\\u${code.toString(16).padStart(4, '0')}`
    else out += char
  }
  return `${out}'`
}

export function propertyKey(name: string): string {
  return isIdentifier(name) ? name : tsString(name)
}

/** A JSON value (from the YAML document) as a TypeScript expression, on one line. */
export function tsValue(value: unknown, where: string): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string':
      return tsString(value)
    case 'boolean':
      return String(value)
    case 'number':
      if (!Number.isFinite(value)) throw new OpenApiCodegenError(where, `${value} is not a JSON number`)
      return Object.is(value, -0) ? '0' : String(value)
    case 'object':
      if (Array.isArray(value)) return `[${value.map((item) => tsValue(item, where)).join(', ')}]`
      {
        const entries = Object.entries(value as Record<string, unknown>)
        if (entries.length === 0) return '{}'
        return `{ ${entries.map(([name, item]) => `${propertyKey(name)}: ${tsValue(item, where)}`).join(', ')} }`
      }
    default:
      throw new OpenApiCodegenError(where, `${typeof value} is not a JSON value`)
  }
}

/** `[a, b]` on one line when short and flat, else one element per line. */
export function tsList(items: string[], indent: string): string {
  const flat = `[${items.join(', ')}]`
  if (items.length === 0) return '[]'
  if (flat.length <= 100 && !items.some((item) => item.includes('\n'))) return flat
  return `[\n${items.map((item) => `${indent}  ${item},`).join('\n')}\n${indent}]`
}

// ---------------------------------------------------------------------------------------------
// Keywords

/** Annotations: no effect on validation or serialization, dropped from the generated code. */
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'example', 'deprecated', '$comment', 'externalDocs'])
/** Kept as TypeBox options on whatever the schema becomes. */
const GENERIC_OPTIONS = ['default', 'readOnly', 'writeOnly'] as const
/** Kept as TypeBox options on the member of the given JSON type. */
const TYPE_OPTIONS: Record<string, readonly string[]> = {
  string: ['format', 'pattern', 'minLength', 'maxLength'],
  integer: ['format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  number: ['format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['minItems', 'maxItems', 'uniqueItems'],
  object: ['minProperties', 'maxProperties'],
  boolean: [],
  null: [],
}
const TYPED_OPTIONS = new Set(Object.values(TYPE_OPTIONS).flat())
/** Structural keywords, each translated into a TypeBox builder. */
const STRUCTURE = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', '$ref', 'anyOf', 'oneOf'])
const OBJECT_STRUCTURE = ['properties', 'required', 'additionalProperties'] as const
const JSON_TYPES = Object.keys(TYPE_OPTIONS)

const BUILDERS: Record<string, string> = {
  string: 'Type.String',
  integer: 'Type.Integer',
  number: 'Type.Number',
  boolean: 'Type.Boolean',
  null: 'Type.Null',
}

function isAnnotation(keyword: string): boolean {
  return ANNOTATIONS.has(keyword) || keyword.startsWith('x-')
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function matchesType(value: unknown, type: string): boolean {
  const actual = jsonTypeOf(value)
  return actual === type || (type === 'number' && actual === 'integer')
}

function checkOptionValue(keyword: string, value: unknown, where: string): void {
  const fail = (expected: string) => {
    throw new OpenApiCodegenError(where, `"${keyword}" must be ${expected}, got ${JSON.stringify(value)}`)
  }
  switch (keyword) {
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minProperties':
    case 'maxProperties':
      if (!Number.isInteger(value) || (value as number) < 0) fail('a non-negative integer')
      break
    case 'minimum':
    case 'maximum':
      if (typeof value !== 'number' || !Number.isFinite(value)) fail('a number')
      break
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      // OpenAPI 3.0 wrote these as booleans next to minimum/maximum; 3.1 (JSON Schema 2020-12) uses the bound itself.
      if (typeof value !== 'number' || !Number.isFinite(value)) fail('a number (OpenAPI 3.1), not an OpenAPI 3.0 boolean')
      break
    case 'multipleOf':
      if (typeof value !== 'number' || !(value > 0)) fail('a positive number')
      break
    case 'format':
      if (typeof value !== 'string' || value === '') fail('a non-empty string')
      break
    case 'pattern':
      if (typeof value !== 'string') fail('a string')
      try {
        // AJV compiles patterns with the unicode flag.
        new RegExp(value as string, 'u')
      } catch (error) {
        throw new OpenApiCodegenError(where, `"pattern" is not a valid regular expression: ${(error as Error).message}`)
      }
      break
    case 'uniqueItems':
    case 'readOnly':
    case 'writeOnly':
      if (typeof value !== 'boolean') fail('a boolean')
      break
    default:
      break
  }
}

function checkMinMax(schema: JsonSchema, low: string, high: string, where: string): void {
  const min = schema[low]
  const max = schema[high]
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    throw new OpenApiCodegenError(where, `"${low}" (${min}) is greater than "${high}" (${max}): no value can match`)
  }
}

// ---------------------------------------------------------------------------------------------
// The writer

export interface SchemaScope {
  /** Names of components.schemas; a $ref to anything else is an error. */
  readonly componentNames: ReadonlySet<string>
  /** Filled in: the component schemas the written code refers to, in order of first use. */
  readonly used: Set<string>
}

export function componentConstant(name: string): string {
  return `${name}Schema`
}

/** `#/components/schemas/Name` → `Name` (the only $ref allowed inside a schema). */
export function schemaRefName(ref: unknown, where: string): string {
  if (typeof ref !== 'string') throw new OpenApiCodegenError(where, '"$ref" must be a string')
  const match = /^#\/components\/schemas\/([^/]+)$/.exec(ref)
  if (!match) throw new OpenApiCodegenError(where, `only #/components/schemas/<Name> refs may appear inside a schema, got ${ref}`)
  return decodeURIComponent(match[1]!).replace(/~1/g, '/').replace(/~0/g, '~')
}

export class SchemaWriter {
  constructor(private readonly scope: SchemaScope) {}

  /**
   * TypeBox code for `schema`. The first line is not indented; later lines are indented relative
   * to `indent`, the indentation of the line the code starts on.
   */
  write(schema: unknown, where: string, indent = ''): string {
    if (schema === true) return 'Type.Unknown()'
    if (schema === false) return 'Type.Never()'
    if (!isPlainObject(schema)) throw new OpenApiCodegenError(where, 'a schema must be an object')

    for (const keyword of Object.keys(schema)) {
      if (
        !STRUCTURE.has(keyword) &&
        !TYPED_OPTIONS.has(keyword) &&
        !(GENERIC_OPTIONS as readonly string[]).includes(keyword) &&
        !isAnnotation(keyword)
      ) {
        throw new OpenApiCodegenError(where, `unsupported JSON Schema keyword "${keyword}"`)
      }
      if (TYPED_OPTIONS.has(keyword) || (GENERIC_OPTIONS as readonly string[]).includes(keyword))
        checkOptionValue(keyword, schema[keyword], where)
    }
    checkMinMax(schema, 'minimum', 'maximum', where)
    checkMinMax(schema, 'minLength', 'maxLength', where)
    checkMinMax(schema, 'minItems', 'maxItems', where)
    checkMinMax(schema, 'minProperties', 'maxProperties', where)

    if ('$ref' in schema) return this.writeRef(schema, where)
    if ('anyOf' in schema || 'oneOf' in schema) return this.writeUnion(schema, where, indent)

    const types = this.types(schema, where)
    const present = Object.keys(schema).filter((keyword) => TYPED_OPTIONS.has(keyword))
    for (const keyword of present) {
      if (types.length === 0) throw new OpenApiCodegenError(where, `"${keyword}" needs a "type" to apply to`)
      if (!types.some((type) => TYPE_OPTIONS[type]!.includes(keyword))) {
        throw new OpenApiCodegenError(where, `"${keyword}" does not apply to type ${types.join(' or ')}`)
      }
    }
    for (const keyword of OBJECT_STRUCTURE) {
      if (keyword in schema && !types.includes('object')) throw new OpenApiCodegenError(where, `"${keyword}" needs type object`)
    }
    if ('items' in schema && !types.includes('array')) throw new OpenApiCodegenError(where, '"items" needs type array')

    if ('enum' in schema || 'const' in schema) return this.writeEnum(schema, types, where, indent)
    if (types.length === 0) return this.call('Type.Unknown', [], this.options(schema, GENERIC_OPTIONS, where))
    if (types.length === 1) return this.writeType(schema, types[0]!, [...TYPE_OPTIONS[types[0]!]!, ...GENERIC_OPTIONS], where, indent)

    // type: [integer, 'null'] and the like: a union of one member per type. Type-specific keywords
    // go on their member; default/readOnly/writeOnly describe the whole value.
    const members = types
      .filter((type) => type !== 'null')
      .map((type) => this.writeType(schema, type, TYPE_OPTIONS[type]!, `${where} (as ${type})`, `${indent}  `))
    if (types.includes('null')) members.push('Type.Null()')
    return this.call('Type.Union', [tsList(members, indent)], this.options(schema, GENERIC_OPTIONS, where))
  }

  private writeRef(schema: JsonSchema, where: string): string {
    const siblings = Object.keys(schema).filter((keyword) => keyword !== '$ref' && !isAnnotation(keyword))
    if (siblings.length > 0) {
      throw new OpenApiCodegenError(
        where,
        `keywords next to "$ref" are not supported (${siblings.join(', ')}); move them into the referenced schema`,
      )
    }
    const name = schemaRefName(schema.$ref, where)
    if (!this.scope.componentNames.has(name)) throw new OpenApiCodegenError(where, `$ref to unknown schema ${String(schema.$ref)}`)
    this.scope.used.add(name)
    return componentConstant(name)
  }

  private writeUnion(schema: JsonSchema, where: string, indent: string): string {
    if ('anyOf' in schema && 'oneOf' in schema) throw new OpenApiCodegenError(where, '"anyOf" and "oneOf" together are not supported')
    const keyword = 'anyOf' in schema ? 'anyOf' : 'oneOf'
    const extra = Object.keys(schema).filter(
      (name) => name !== keyword && !isAnnotation(name) && !(GENERIC_OPTIONS as readonly string[]).includes(name),
    )
    if (extra.length > 0) {
      throw new OpenApiCodegenError(
        where,
        `"${keyword}" next to ${extra.map((name) => `"${name}"`).join(', ')} is not supported; put those keywords into the alternatives`,
      )
    }
    const alternatives = schema[keyword]
    if (!Array.isArray(alternatives) || alternatives.length === 0)
      throw new OpenApiCodegenError(where, `"${keyword}" must be a non-empty array`)
    const members = alternatives.map((member, index) => this.write(member, `${where}.${keyword}[${index}]`, `${indent}  `))
    return this.call('Type.Union', [tsList(members, indent)], this.options(schema, GENERIC_OPTIONS, where))
  }

  private types(schema: JsonSchema, where: string): string[] {
    const type = schema.type
    if (type === undefined) return []
    const types = Array.isArray(type) ? type : [type]
    if (types.length === 0) throw new OpenApiCodegenError(where, '"type" must not be an empty array')
    for (const item of types) {
      if (typeof item !== 'string' || !JSON_TYPES.includes(item))
        throw new OpenApiCodegenError(where, `unsupported type ${JSON.stringify(item)}`)
    }
    if (new Set(types).size !== types.length) throw new OpenApiCodegenError(where, `"type" lists a type twice`)
    return types as string[]
  }

  private writeEnum(schema: JsonSchema, types: string[], where: string, indent: string): string {
    if ('enum' in schema && 'const' in schema) throw new OpenApiCodegenError(where, '"enum" and "const" together are not supported')
    const values = 'const' in schema ? [schema.const] : schema.enum
    if (!Array.isArray(values) || values.length === 0) throw new OpenApiCodegenError(where, '"enum" must be a non-empty array')
    const seen = new Set<string>()
    const members = values.map((value) => {
      if (value !== null && typeof value === 'object')
        throw new OpenApiCodegenError(
          where,
          `only string, number, boolean and null enum values are supported, got ${JSON.stringify(value)}`,
        )
      if (types.length > 0 && !types.some((type) => matchesType(value, type))) {
        throw new OpenApiCodegenError(where, `enum value ${JSON.stringify(value)} is not of type ${types.join(' or ')}`)
      }
      const key = JSON.stringify(value)
      if (seen.has(key)) throw new OpenApiCodegenError(where, `enum value ${key} is listed twice`)
      seen.add(key)
      return value === null ? 'Type.Null()' : `Type.Literal(${tsValue(value, where)})`
    })
    const optionKeys = [...new Set(types.flatMap((type) => TYPE_OPTIONS[type]!)), ...GENERIC_OPTIONS]
    const options = this.options(schema, optionKeys, where)
    if (values.length === 1)
      return values[0] === null ? this.call('Type.Null', [], options) : this.call('Type.Literal', [tsValue(values[0], where)], options)
    return this.call('Type.Union', [tsList(members, indent)], options)
  }

  private writeType(schema: JsonSchema, type: string, optionKeys: readonly string[], where: string, indent: string): string {
    if (type === 'array') {
      if (!('items' in schema)) throw new OpenApiCodegenError(where, 'an array needs "items"')
      if (Array.isArray(schema.items)) throw new OpenApiCodegenError(where, 'tuple "items" (an array of schemas) is not supported')
      const items = this.write(schema.items, `${where}.items`, indent)
      return this.call('Type.Array', [items], this.options(schema, optionKeys, where))
    }
    if (type === 'object') return this.writeObject(schema, optionKeys, where, indent)
    return this.call(BUILDERS[type]!, [], this.options(schema, optionKeys, where))
  }

  private writeObject(schema: JsonSchema, optionKeys: readonly string[], where: string, indent: string): string {
    const properties = schema.properties ?? {}
    if (!isPlainObject(properties)) throw new OpenApiCodegenError(where, '"properties" must be an object')
    const required = schema.required ?? []
    if (!Array.isArray(required) || required.some((name) => typeof name !== 'string')) {
      throw new OpenApiCodegenError(where, '"required" must be an array of property names')
    }
    if (new Set(required).size !== required.length) throw new OpenApiCodegenError(where, '"required" lists a property twice')
    for (const name of required as string[]) {
      if (!(name in properties)) throw new OpenApiCodegenError(where, `required property "${name}" is not in "properties"`)
    }
    const additional = schema.additionalProperties
    const names = Object.keys(properties)
    const options = this.options(schema, optionKeys, where)

    if (names.length === 0 && additional !== false) {
      // A map: any property names, each value matching additionalProperties (anything when absent).
      const values =
        additional === undefined || additional === true ? 'Type.Unknown()' : this.write(additional, `${where}.additionalProperties`, indent)
      return this.call('Type.Record', ['Type.String()', values], options)
    }

    const inner = `${indent}  `
    const requiredSet = new Set(required as string[])
    const lines = names.map((name) => {
      const code = this.write(properties[name], `${where}.properties.${name}`, inner)
      return `${inner}${propertyKey(name)}: ${requiredSet.has(name) ? code : `Type.Optional(${code})`},`
    })
    const body = lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`
    if (additional !== undefined) {
      const value = typeof additional === 'boolean' ? String(additional) : this.write(additional, `${where}.additionalProperties`, indent)
      options.push(`additionalProperties: ${value}`)
    }
    return this.call('Type.Object', [body], options)
  }

  /** `format: 'int32'`, `minimum: 1`, … for the listed keywords present in `schema`, in document order. */
  private options(schema: JsonSchema, keys: readonly string[], where: string): string[] {
    return Object.entries(schema)
      .filter(([keyword]) => keys.includes(keyword))
      .map(([keyword, value]) => `${keyword}: ${tsValue(value, `${where}.${keyword}`)}`)
  }

  /** `Builder(args…, { options })`, the options argument left out when there are none. */
  private call(builder: string, args: string[], options: string[]): string {
    return `${builder}(${[...args, ...(options.length > 0 ? [`{ ${options.join(', ')} }`] : [])].join(', ')})`
  }
}

// ---------------------------------------------------------------------------------------------
// Component schemas, in dependency order

export interface WrittenComponent {
  name: string
  code: string
  dependencies: string[]
}

/**
 * Writes every component schema and orders them so each comes after the schemas it refers to
 * (document order otherwise). A cycle is an error: the generated constants could not be declared.
 */
export function writeComponentSchemas(schemas: Record<string, unknown>, where = 'components.schemas'): WrittenComponent[] {
  const componentNames = new Set(Object.keys(schemas))
  const written = new Map<string, WrittenComponent>()
  for (const [name, schema] of Object.entries(schemas)) {
    if (!isIdentifier(name))
      throw new OpenApiCodegenError(`${where}.${name}`, 'a component schema name must be a valid identifier (letters, digits, _ and $)')
    const scope: SchemaScope = { componentNames, used: new Set() }
    const code = new SchemaWriter(scope).write(schema, `${where}.${name}`)
    written.set(name, { name, code, dependencies: [...scope.used] })
  }
  const ordered: WrittenComponent[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (name: string, chain: string[]) => {
    const status = state.get(name)
    if (status === 'done') return
    if (status === 'visiting') {
      const cycle = [...chain.slice(chain.indexOf(name)), name]
      throw new OpenApiCodegenError(
        `${where}.${name}`,
        `schemas refer to each other in a cycle (${cycle.join(' → ')}); recursive schemas are not supported`,
      )
    }
    state.set(name, 'visiting')
    const component = written.get(name)!
    for (const dependency of component.dependencies) visit(dependency, [...chain, name])
    state.set(name, 'done')
    ordered.push(component)
  }
  for (const name of written.keys()) visit(name, [])
  return ordered
}
