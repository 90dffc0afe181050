/**
 * One validation of commands for both styles (decisions §12): every command a service accepts is
 * checked against the contract's own request schema (openapi.yaml, generated into
 * src/generated/openapi/schemas.ts), compiled once per app (on first use) with the same AJV settings as REST's
 * body validation. REST has already checked the body at its edge with the same schema, so the
 * check here changes nothing for it; for GraphQL it is where the bounds of decisions §3 hold.
 * No bound is written here: each comes from the contract.
 */
import type { ValidateFunction } from 'ajv'
import { ApiError, type FieldError } from '../errors.ts'
import {
  ActionRequestSchema,
  ArticleCreateSchema,
  ArticlePatchSchema,
  CommentCreateSchema,
  OrderCreateSchema,
  OrderPatchSchema,
  ProductCreateSchema,
  UserCreateSchema,
} from '../generated/openapi/schemas.ts'
import { createAjv, fieldErrorsFromValidation } from './validation.ts'

/** Each command and the contract schema it must satisfy. */
const COMMAND_SCHEMAS = {
  OrderCreate: OrderCreateSchema,
  /** PUT and PATCH of an order's items: the patch schema bounds the items when they are given. */
  OrderItemsReplace: OrderPatchSchema,
  OrderAction: ActionRequestSchema,
  ProductCreate: ProductCreateSchema,
  UserCreate: UserCreateSchema,
  ArticleCreate: ArticleCreateSchema,
  ArticleUpdate: ArticlePatchSchema,
  CommentCreate: CommentCreateSchema,
} satisfies Record<string, object>

export type CommandName = keyof typeof COMMAND_SCHEMAS

/** A command that breaks the contract: 400 VALIDATION_FAILED naming each field as a body pointer. */
export const invalidCommand = (errors: FieldError[]) =>
  new ApiError('VALIDATION_FAILED', `The request is invalid: ${errors.length} problem(s) found.`, { errors })

/** The command as JSON would carry it: a property set to undefined is no property at all. */
function asSent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asSent)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .map(([key, inner]) => [key, asSent(inner)]),
  )
}

export function createCommandValidator() {
  const ajv = createAjv(false)
  // Each compiled on its first command, not at start (start-up time), like REST's.
  const validators = new Map<CommandName, ValidateFunction>()
  return {
    /** Throws 400 VALIDATION_FAILED naming every field of `command` that breaks the contract. */
    check(name: CommandName, command: unknown): void {
      let validate = validators.get(name)
      if (!validate) {
        validate = ajv.compile(COMMAND_SCHEMAS[name])
        validators.set(name, validate)
      }
      if (!validate(asSent(command))) throw invalidCommand(fieldErrorsFromValidation(validate.errors, 'body'))
    },
  }
}

export type CommandValidator = ReturnType<typeof createCommandValidator>
