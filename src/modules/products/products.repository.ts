/** All SQL for the product catalog. */
import { sql } from 'kysely'
import type { ProductRow } from '../../db/schema.ts'
import type { Executor } from '../../db/executor.ts'
import type { StatementSteps } from '../../db/write.ts'
import type { Product } from '../../contract/contract-types.ts'
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

/**
 * A new product in one statement (src/db/write.ts, StatementWork): inserted when `proceeds` unless
 * its sku is taken, found by the insert itself (`on conflict do nothing`, so a racing create is
 * refused too, and a refused insert changed nothing); `written`, the product as the API shows it.
 * No row: the sku was taken.
 */
export const newProductStatement: StatementSteps<Product> = {
  steps: (product, proceeds) => sql`inserted as (
    insert into products (sku, name, price) select ${product.sku}::text, ${product.name}::text, ${product.price}::int where ${proceeds}
    on conflict (sku) do nothing returning sku, name, price
  ), written as (
    select jsonb_build_object('sku', inserted.sku, 'name', inserted.name, 'price', inserted.price) as value from inserted
  )`,
  result: 'written',
  parametersOf: (product) => [product.sku, product.name, product.price],
}
