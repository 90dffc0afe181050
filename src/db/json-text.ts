/**
 * JSON text PostgreSQL built for a value of type T: a REST read sends it as it is (decisions §6,
 * "Reads built by the database"), with no parsing or serializing in JavaScript. The type records
 * what the text holds; the statement that builds it is written against the contract's shape, and
 * the tests validate every answer against openapi.yaml.
 */
declare const holds: unique symbol
export type JsonText<T> = string & { readonly [holds]?: T }
