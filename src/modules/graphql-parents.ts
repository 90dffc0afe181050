/**
 * What each GraphQL object type's resolvers receive as their parent: the service's record (codegen
 * maps schema.graphql's types to these, so resolvers and loaders are typed by what the services
 * return, not by the GraphQL shape). A record reached through a list carries its `cursor` there.
 */
import type { Article, Comment, OrderItem, Product, User } from '../contract/contract-types.ts'
import type { OrderWithRelated } from './orders/orders.service.ts'
import type { Company, UserWithRelated } from './users/users.service.ts'
import type { Connection, CountedConnection, Edge } from '../graphql/resolving/connection.ts'

type Listed<T> = T & { cursor?: string }

/** A user, with the relations a plan read with it. */
export type UserParent = Listed<UserWithRelated>
export type CompanyParent = Company
/** An order, with the relations a plan read with it. */
export type OrderParent = Listed<OrderWithRelated>
/**
 * A line item, with the order it belongs to and its position there: its global id's key (node.ts).
 * Read by a plan, it has only the item fields selected (orders.plan.ts).
 */
export type ItemParent = Partial<OrderItem> & { orderId: number; position: number }
export type ProductParent = Product
/** The public profile of a user. */
export type AuthorParent = Pick<User, 'id' | 'name'>
export type ArticleParent = Listed<Article>
export type CommentParent = Comment
export type UserConnectionParent = CountedConnection<UserParent>
export type UserEdgeParent = Edge<UserParent>
export type OrderConnectionParent = CountedConnection<OrderParent>
export type OrderEdgeParent = Edge<OrderParent>
export type ArticleConnectionParent = CountedConnection<ArticleParent>
export type ArticleEdgeParent = Edge<ArticleParent>
export type ProductConnectionParent = CountedConnection<ProductParent>
export type ProductEdgeParent = Edge<ProductParent>
export type CommentConnectionParent = Connection<CommentParent>
export type CommentEdgeParent = Edge<CommentParent>
export type PageInfoParent = Connection<unknown>['pageInfo']
