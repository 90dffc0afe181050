/**
 * Codegen's input besides the contracts, for src/generated/required-scopes.ts: the scopes a token
 * may carry, and the service operations that authorize with the contract operations each one
 * serves (REST by operationId, GraphQL by `Type.field`). Which operation needs which scope is not
 * written here: the contracts say it (`x-required-scopes` in openapi.yaml, `@requiresScopes` in
 * schema.graphql), and codegen/required-scopes.ts derives each service operation's scopes from the
 * operations it serves, failing when those disagree or when an operation that needs a scope is
 * served by none. A service calls `authorize(caller, '<name>')` (src/auth/policy.ts) before it
 * reads or changes anything.
 */

/** The scopes of decisions §2; `admin` satisfies every other and lifts ownership limits. */
export const SCOPES = ['orders:read', 'orders:write', 'articles:write', 'admin'] as const

export interface ServedOperations {
  readonly rest: readonly string[]
  readonly graphql: readonly string[]
}

export const serviceOperations = {
  // Orders (src/modules/orders): reading needs what getOrder needs, GraphQL's node(id:) and the event
  // log included; listOrderItems reads the order first.
  getOrder: { rest: ['getOrder', 'listOrderItems'], graphql: ['Query.order'] },
  listOrders: { rest: ['listOrders'], graphql: ['Query.orders', 'Query.ordersConnection'] },
  listUserOrders: { rest: ['listUserOrders'], graphql: ['User.orders'] },
  createOrder: { rest: ['createOrder'], graphql: ['Mutation.createOrder'] },
  updateOrder: { rest: ['replaceOrder', 'updateOrder'], graphql: ['Mutation.updateOrder'] },
  payOrder: { rest: ['payOrder'], graphql: ['Mutation.payOrder'] },
  cancelOrder: { rest: ['cancelOrder'], graphql: ['Mutation.cancelOrder'] },
  refundOrder: { rest: ['refundOrder'], graphql: ['Mutation.refundOrder'] },
  deleteOrder: { rest: ['deleteOrder'], graphql: ['Mutation.deleteOrder'] },
  orderStatusChanged: { rest: [], graphql: ['Subscription.orderStatusChanged'] },
  orderCreated: { rest: [], graphql: ['Subscription.orderCreated'] },
  // Articles and comments (src/modules/articles).
  listArticles: { rest: ['listArticles'], graphql: ['Query.articles', 'Query.articlesConnection'] },
  getArticle: { rest: ['getArticle'], graphql: ['Query.article'] },
  createArticle: { rest: ['createArticle'], graphql: ['Mutation.createArticle'] },
  updateArticle: { rest: ['replaceArticle', 'updateArticle'], graphql: ['Mutation.updateArticle'] },
  deleteArticle: { rest: ['deleteArticle'], graphql: ['Mutation.deleteArticle'] },
  createArticleComment: { rest: ['createArticleComment'], graphql: ['Mutation.addComment'] },
  // Users (src/modules/users).
  getUser: { rest: ['getUser'], graphql: ['Query.user', 'Query.me'] },
  listUsers: { rest: ['listUsers'], graphql: ['Query.users', 'Query.usersConnection'] },
  createUser: { rest: ['createUser'], graphql: ['Mutation.createUser'] },
  // Products (src/modules/products).
  listProducts: { rest: ['listProducts'], graphql: ['Query.products', 'Query.productsConnection'] },
  createProduct: { rest: ['createProduct'], graphql: ['Mutation.createProduct'] },
} as const satisfies Record<string, ServedOperations>
