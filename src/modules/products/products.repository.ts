/** All SQL for the product catalog. */
import { sql } from 'kysely'
import type { ProductRow } from '../../db/schema.ts'
import type { Executor } from '../../db/executor.ts'
import { anyText } from '../../db/any-of.ts'
import { pageByUniqueColumn } from '../../db/keyset.ts'

export async function findProductPage(db: Executor, query: { afterSku: string | undefined; limit: number }): Promise<ProductRow[]> {
  const result =
    await sql<ProductRow>`select * from products ${pageByUniqueColumn('sku', { after: query.afterSku, limit: query.limit })}`.execute(db)
  return result.rows
}

export async function countProducts(db: Executor): Promise<number> {
  const row = await db.selectFrom('products').select(sql<number>`count(*)`.as('count')).executeTakeFirstOrThrow()
  return Number(row.count)
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
