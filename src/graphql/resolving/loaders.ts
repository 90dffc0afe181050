/**
 * The type of the loaders (Mercurius' loader shape, batched by batched-loaders.ts), derived from
 * the generated resolver types: a loader of `Type.field` receives each parent (`obj`, the service
 * record) with the field's arguments (`params`) and its resolve info (`info`, to look ahead at what
 * is selected below it), and answers each with the field's result or an Error. A null for a non-null
 * field (a related record gone between two statements) becomes that field's error, as from any
 * resolver.
 *
 * A loader may also say where a parent already carries its answer (`preloaded`): a plan read it
 * with the parent, in the parent's statement, through the same service rules. A parent without it
 * is loaded as usual.
 */
import type { GraphQLResolveInfo } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import type { Resolvers } from '../../generated/graphql/types.ts'

type RootType = 'Query' | 'Mutation' | 'Subscription'
type FieldsOf<Type extends keyof Resolvers> = Exclude<keyof NonNullable<Resolvers[Type]>, `__${string}`>

type LoadBatch<Parent, Args, Result> = (
  queries: Array<{ obj: Parent; params: Args; info: GraphQLResolveInfo }>,
  context: MercuriusContext,
) => Promise<Array<Awaited<Result> | Error | null>>

interface PreloadingLoader<Parent, Args, Result> {
  loader: LoadBatch<Parent, Args, Result>
  /** The answer the parent carries, or undefined when it carries none (null is an answer). */
  preloaded: (parent: Parent, args: Args) => Awaited<Result> | null | undefined
}

type FieldLoader<Resolve> = Resolve extends (parent: infer Parent, args: infer Args, ...rest: never[]) => infer Result
  ? LoadBatch<Parent, Args, Result> | PreloadingLoader<Parent, Args, Result>
  : never

export type Loaders = {
  [Type in Exclude<keyof Resolvers, RootType | 'DateTime'>]?: {
    [Field in FieldsOf<Type>]?: FieldLoader<NonNullable<NonNullable<Resolvers[Type]>[Field]>>
  }
}

/**
 * The generated resolver map less what Mercurius' resolver maps have no place for: the Node
 * interface's `__resolveType` (graphql's default type resolver reads the `__typename` tag node.ts
 * puts on what node/nodes return) and its types' `__isTypeOf`. None of them is ever set.
 */
type ObjectResolvers = { [Type in Exclude<keyof Resolvers, 'Node'>]?: Omit<NonNullable<Resolvers[Type]>, '__isTypeOf'> }

/** What the GraphQL plugin serves: every module's resolvers and loaders (src/modules/graphql-resolvers.ts). */
export interface SchemaResolvers {
  resolvers: ObjectResolvers
  loaders: Loaders
}
