/**
 * A persisted GraphQL document as a client sends it (operations/*.graphql, typed by codegen): its
 * name, exact text and that text's SHA-256, with the types of its result and variables.
 */
export interface TypedDocument<Result, Variables> {
  operationName: string
  sha256Hash: string
  query: string
  /** Never set: carries the types. */
  __types?: { result: Result; variables: Variables }
}
