/**
 * How deeply a GraphQL document's brackets nest, measured on its text before anything parses it.
 * graphql-js parses recursively: a list literal a few thousand levels deep (`[[[[…]]]]` in an
 * argument or a variable's default) overflows the stack, and Mercurius reports that RangeError as
 * an internal error. A document nesting deeper than the bound is refused as one that does not
 * parse, with graphql-js's own wording for the parser's other bound (`maxTokens`).
 */
import { GraphQLError, Source } from 'graphql'

/**
 * Brackets (`{`, `[`, `(`) a document may nest. Real documents stay far below it (the
 * introspection query's type references nest about a dozen), and every recursive step after
 * parsing (validation, the limits, graphql-jit) is safe well beyond it.
 */
export const MAX_DOCUMENT_NESTING = 100

const BRACE = 0x7b
const BRACKET = 0x5b
const PARENTHESIS = 0x28
const CLOSING_BRACE = 0x7d
const CLOSING_BRACKET = 0x5d
const CLOSING_PARENTHESIS = 0x29
const QUOTE = 0x22
const BACKSLASH = 0x5c
const HASH = 0x23
const LINE_FEED = 0x0a
const CARRIAGE_RETURN = 0x0d

/** Where the string that opens at `start` (a `"`) ends: the index of its closing quote, or of the line end or text end where graphql-js will report it unterminated. */
function endOfString(text: string, start: number): number {
  if (text.startsWith('"""', start)) {
    // A block string ends at the first `"""` not escaped as `\"""`; it may span lines.
    for (let i = start + 3; i < text.length; i++) {
      if (text.charCodeAt(i) === BACKSLASH && text.startsWith('"""', i + 1)) i += 3
      else if (text.startsWith('"""', i)) return i + 2
    }
    return text.length
  }
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === BACKSLASH) i++
    else if (c === QUOTE || c === LINE_FEED || c === CARRIAGE_RETURN) return i
  }
  return text.length
}

/** graphql's syntax error for a document that nests deeper than MAX_DOCUMENT_NESTING, located where it does; undefined for one that does not. */
export function nestingProblem(text: string): GraphQLError | undefined {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    switch (text.charCodeAt(i)) {
      case BRACE:
      case BRACKET:
      case PARENTHESIS:
        depth++
        if (depth > MAX_DOCUMENT_NESTING) {
          return new GraphQLError(`Syntax Error: Document nests deeper than ${MAX_DOCUMENT_NESTING} levels. Parsing aborted.`, {
            source: new Source(text),
            positions: [i],
          })
        }
        break
      case CLOSING_BRACE:
      case CLOSING_BRACKET:
      case CLOSING_PARENTHESIS:
        depth--
        break
      case QUOTE:
        i = endOfString(text, i)
        break
      case HASH:
        // A comment runs to the end of its line.
        while (i + 1 < text.length && text.charCodeAt(i + 1) !== LINE_FEED && text.charCodeAt(i + 1) !== CARRIAGE_RETURN) i++
        break
    }
  }
  return undefined
}
