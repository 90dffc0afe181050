/**
 * The type of the loaders (Mercurius' loader shape, batched by batched-loaders.ts), derived from
 * the generated resolver types: a loader of `Type.field` receives each parent (`obj`, the service
 * record) with the field's arguments (`params`), and answers each with the field's result or an
 * Error. A null for a non-null field
 * (a related record gone between two statements) becomes that field's error, as from any resolver.
 */
import type { MercuriusContext } from 'mercurius'
import type { Resolvers } from '../generated/graphql/types.ts'

type RootType = 'Query' | 'Mutation' | 'Subscription'
type FieldsOf<Type extends keyof Resolvers> = Exclude<keyof NonNullable<Resolvers[Type]>, `__${string}`>

type FieldLoader<Resolve> = Resolve extends (parent: infer Parent, args: infer Args, ...rest: never[]) => infer Result
  ? (queries: Array<{ obj: Parent; params: Args }>, context: MercuriusContext) => Promise<Array<Awaited<Result> | Error | null>>
  : never

export type Loaders = {
  [Type in Exclude<keyof Resolvers, RootType | 'DateTime'>]?: {
    [Field in FieldsOf<Type>]?: FieldLoader<NonNullable<NonNullable<Resolvers[Type]>[Field]>>
  }
}
