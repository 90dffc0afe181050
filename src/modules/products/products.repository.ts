/** All SQL for the product catalog. */
import { sql } from 'kysely'
import type { ProductRow } from '../../db/schema.ts'
import type { Executor } from '../../db/executor.ts'
import { anyText } from '../../db/any-of.ts'
import { pageByUniqueColumn } from '../../db/keyset.ts'
import { countedRows, readPage } from '../../db/row-counts.ts'

/** One page of products by sku (limit + 1 rows), and with `withTotal` every product's count, read in the same statement. */
export async function findProductPage(
  db: Executor,
  query: { afterSku: string | undefined; limit: number },
  options: { withTotal: boolean },
): Promise<{ rows: ProductRow[]; total: number | undefined }> {
  const page = sql<ProductRow>`select * from products ${pageByUniqueColumn('sku', { after: query.afterSku, limit: query.limit })}`
  return readPage(db, page, 'sku', options.withTotal ? countedRows('products') : undefined)
}

export async function findProductsBySkus(db: Executor, skus: readonly string[]): Promise<ProductRow[]> {
  if (skus.length === 0) return []
  return db.selectFrom('products').selectAll().where('sku', '=', anyText(skus)).execute()
}

/** Inserts unless the sku is taken; undefined means it was. */
export async function insertProduct(db: Executor, product: { sku: string; name: string; price: number }): Promise<ProductRow | undefined> {
  return db
    .insertInto('products')
    .values(product)
    .onConflict((conflict) => conflict.column('sku').doNothing())
    .returningAll()
    .executeTakeFirst()
}
