/**
 * How long a GraphQL document may be, in tokens (GRAPHQL_MAX_TOKENS, decisions §13). Parsing and
 * validating take time in proportion to a document's tokens, in one block of the event loop: a
 * 1 MiB document (the body limit) took the parser 0.5-1.7 s on this project's machine, before any
 * limit could look at it. Over HTTP, graphql's parser stops at the limit itself (Mercurius'
 * `parseOptions.maxTokens`: GRAPHQL_PARSE_FAILED); Mercurius parses a subscription's document
 * without that option, so websocket.ts counts its tokens first, with this.
 */
import { Lexer, Source, TokenKind } from 'graphql'

/** Whether `document` has more than `maxTokens` tokens (comments not counted, as graphql's parser counts). */
export function exceedsTokens(document: string, maxTokens: number): boolean {
  // Every token is at least one character long.
  if (document.length <= maxTokens) return false
  const lexer = new Lexer(new Source(document))
  try {
    let count = 0
    while (lexer.advance().kind !== TokenKind.EOF) if (++count > maxTokens) return true
  } catch {
    // A syntax error before the limit: the parser reports it (GRAPHQL_PARSE_FAILED).
  }
  return false
}

/** Why a document over the limit is refused. */
export function tooManyTokensMessage(maxTokens: number): string {
  return `Syntax Error: Document contains more than ${maxTokens} tokens. Parsing aborted.`
}
