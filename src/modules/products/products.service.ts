/** The product catalog: any valid token may read it; only admins add to it. */
import type { Caller } from '../../auth/caller.ts'
import { authorize } from '../../auth/policy.ts'
import type { ProductRow } from '../../db/schema.ts'
import { compileStatementWrite, type WriteOptions, type Written } from '../../db/write.ts'
import { conflict } from '../../errors.ts'
import type { Product } from '../../contract/contract-types.ts'
import { cutPage } from '../../pagination/keyset-page.ts'
import type { Page } from '../../pagination/page.ts'
import type { ServiceDependencies } from '../service-dependencies.ts'
import { cacheReferences } from '../../cache-references.ts'
import * as repository from './products.repository.ts'

export function toProduct(row: ProductRow): Product {
  return { sku: row.sku, name: row.name, price: row.price }
}

export function createProductsService({ db, statements, cursors, commands, invalidate }: ServiceDependencies) {
  /** A new product, in one statement; the one refusal is a taken sku (found by the insert itself). */
  const createProduct = compileStatementWrite<Product, object, Product>(
    statements,
    {
      ...repository.newProductStatement,
      refusalOf: (_row, product) => conflict('PRODUCT_EXISTS', `A product with sku "${product.sku}" already exists.`),
      afterCommit: () => invalidate([cacheReferences.products]),
    },
    'creation',
  )
  return {
    /**
     * A page of products, and when asked every product's count in the same statement (envelope A's
     * `page.total`, GraphQL's totalCount), else the page's length.
     */
    async list(
      caller: Caller,
      query: { cursor?: string | undefined; limit: number },
      needs: { total: boolean } = { total: true },
    ): Promise<Page<Product>> {
      authorize(caller, 'listProducts')
      const afterSku = query.cursor === undefined ? undefined : String(cursors.decode(query.cursor, 'products').key[0])
      const { rows, total } = await repository.findProductPage(db, { afterSku, limit: query.limit }, { withTotal: needs.total })
      const page = cutPage(rows.map(toProduct), query.limit, (product) => this.cursorOf(product))
      return { data: page.rows, total: total ?? page.rows.length, nextCursor: page.nextCursor, cursors: page.cursors }
    },

    async create(
      caller: Caller,
      input: { sku: string; name: string; price: number },
      options: WriteOptions = {},
    ): Promise<Written<Product>> {
      commands.check('ProductCreate', input)
      authorize(caller, 'createProduct')
      return createProduct(options.idempotency, { sku: input.sku, name: input.name, price: input.price })
    },

    /** A product's position in the catalog (ordered by sku). */
    cursorOf(product: Product): string {
      return cursors.encode({ list: 'products', sort: 'sku', filter: {}, key: [product.sku, 0] })
    },

    /** Batch lookup for GraphQL (Query.product, Item.product): any valid token reads the catalog, as with `list`. */
    async productsBySkus(_caller: Caller, skus: readonly string[]): Promise<Map<string, Product>> {
      const rows = await repository.findProductsBySkus(db, skus)
      return new Map(rows.map((row) => [row.sku, toProduct(row)]))
    },
  }
}

export type ProductsService = ReturnType<typeof createProductsService>
