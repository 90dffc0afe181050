import { sql, type Kysely } from 'kysely'

/**
 * Exact totals that cost the same on any size of table (decisions §17): the number of rows of each
 * counted table, kept by PostgreSQL itself in the transaction that changes the rows, so that a
 * list's `page.total` (and GraphQL's `totalCount`) is a sum over a few rows of `row_counts`, read
 * in the same statement (the same snapshot) as the page, instead of a count of every matching row.
 *
 * - `row_counts (counted, owner_id, status, slot, n)`: `counted` names the table; `owner_id` is 0
 *   for every owner's rows, or the owning user's id (orders' `user_id`, webhook endpoints'
 *   `owner_id`); `status` is the orders' status, '' elsewhere. A total is the sum of `n` over the
 *   rows its filter names: `('orders', 0, 'paid', *)` is every paid order, `('orders', 7, *, *)`
 *   user 7's orders. A count is kept in as many rows (slots) as writers have needed at once: a
 *   writer adds its change to a row of the count that no other transaction holds (FOR UPDATE SKIP
 *   LOCKED), or to a new row in a random slot when every row is held, so concurrent writers never
 *   wait for each other's commit on a count (a user's long transaction does not hold that user's
 *   other writes, nor anyone's the count of every order). A count has about as many rows as
 *   writers ever added to it at the same moment: one for nearly every user. A row may go below
 *   zero (a row counted in one slot is deleted through another): only the sum means anything.
 * - Statement-level triggers with transition tables: a statement per count a changing statement
 *   touched, however many rows it changed (a new order touches two counts, a bulk delete or a
 *   migration's update no more than it has owners and statuses). An update that changes no counted column (an order's items, an endpoint's lease)
 *   nets to nothing and writes nothing (PostgreSQL allows no column list on a trigger with
 *   transition tables); TRUNCATE forgets the table's counts.
 * - No write path can bypass them (the triggers see every statement, the app's and anyone's), and
 *   this migration cannot miss a write: it locks the counted tables against writes (SHARE ROW
 *   EXCLUSIVE: reads go on), creates the triggers, counts what is there, all in the migration's
 *   one transaction; writers wait the seconds it takes (bench/results/scale.md, "Migrated in").
 *   `select recount_rows()` counts again the same way, for a restore that bypassed the triggers.
 */
/** The tables counted without an owner or status: one count each. */
const PLAIN_TABLES = ['users', 'articles', 'products'] as const

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`lock table orders, users, articles, products, webhook_endpoints in share row exclusive mode`.execute(db)
  await sql`
    create table row_counts (
      counted text not null,
      owner_id integer not null,
      status text not null,
      slot smallint not null,
      n bigint not null,
      primary key (counted, owner_id, status, slot)
    )`.execute(db)

  // The changes of one statement as (owner, status, delta) rows, summed by count; each sum added to
  // a row of its count that no one else holds, or to a new row in a random slot (if another writer
  // takes that slot at the same moment, the insert waits for it and adds to its row). A statement
  // per count, its values bound: PL/pgSQL keeps one plan of each for the session, which is the
  // primary key's whatever the size of the first statement it served.
  const upsert = (counted: string, changes: string) => `
    for change in select owner_id, status, sum(delta) as delta from (${changes}) as change
      group by owner_id, status having sum(delta) <> 0
    loop
      update row_counts set n = n + change.delta
      where (counted, owner_id, status, slot) = (
        select r.counted, r.owner_id, r.status, r.slot from row_counts as r
        where r.counted = ${counted} and r.owner_id = change.owner_id and r.status = change.status
        limit 1 for update skip locked);
      if not found then
        insert into row_counts (counted, owner_id, status, slot, n)
        values (${counted}, change.owner_id, change.status, floor(random() * 32767)::smallint, change.delta)
        on conflict (counted, owner_id, status, slot) do update set n = row_counts.n + excluded.n;
      end if;
    end loop`
  // A counting function of a table counted per owner (its `ownerColumn`) and, for orders, per status.
  const countedPerOwner = async (table: string, ownerColumn: string, statusColumn: string | undefined) => {
    const status = statusColumn ?? `''`
    const changes = (rows: string, delta: number) => `
      select 0 as owner_id, ${status} as status, ${delta} as delta from ${rows}
      union all select ${ownerColumn}, ${status}, ${delta} from ${rows}`
    await sql
      .raw(`
      create function count_${table}() returns trigger language plpgsql as $$
      declare change record;
      begin
        if tg_op = 'INSERT' then
          ${upsert(`'${table}'`, changes('inserted', 1))};
        elsif tg_op = 'DELETE' then
          ${upsert(`'${table}'`, changes('deleted', -1))};
        else
          ${upsert(`'${table}'`, `${changes('deleted', -1)} union all ${changes('inserted', 1)}`)};
        end if;
        return null;
      end $$`)
      .execute(db)
  }
  await countedPerOwner('orders', 'user_id', 'status')
  await countedPerOwner('webhook_endpoints', 'owner_id', undefined)

  // The tables counted whole: the table's name is what is counted.
  await sql
    .raw(`
    create function count_rows() returns trigger language plpgsql as $$
    declare change record;
    begin
      if tg_op = 'INSERT' then
        ${upsert('tg_table_name', `select 0 as owner_id, '' as status, count(*) as delta from inserted`)};
      else
        ${upsert('tg_table_name', `select 0 as owner_id, '' as status, -count(*) as delta from deleted`)};
      end if;
      return null;
    end $$`)
    .execute(db)

  await sql`
    create function forget_counts() returns trigger language plpgsql as $$
    begin
      delete from row_counts where counted = tg_table_name;
      return null;
    end $$`.execute(db)

  const triggers = (table: string, counter: string, counts: 'inserts and deletes' | 'updates too') => [
    `create trigger ${table}_counted_insert after insert on ${table} referencing new table as inserted for each statement execute function ${counter}()`,
    `create trigger ${table}_counted_delete after delete on ${table} referencing old table as deleted for each statement execute function ${counter}()`,
    ...(counts === 'updates too'
      ? [
          `create trigger ${table}_counted_update after update on ${table} referencing old table as deleted new table as inserted for each statement execute function ${counter}()`,
        ]
      : []),
    `create trigger ${table}_counted_truncate after truncate on ${table} for each statement execute function forget_counts()`,
  ]
  for (const statement of [
    ...triggers('orders', 'count_orders', 'updates too'),
    ...triggers('webhook_endpoints', 'count_webhook_endpoints', 'updates too'),
    ...PLAIN_TABLES.flatMap((table) => triggers(table, 'count_rows', 'inserts and deletes')),
  ]) {
    await sql.raw(statement).execute(db)
  }
  // What is there now, counted once, under the lock taken above; the same function recounts after a
  // restore that bypassed the triggers (docs/operations.md, "Exact totals").
  await sql`
    create function recount_rows() returns void language plpgsql as $$
    begin
      lock table orders, users, articles, products, webhook_endpoints in share row exclusive mode;
      delete from row_counts;
      insert into row_counts (counted, owner_id, status, slot, n)
      select 'orders', 0, status, 0, count(*) from orders group by status
      union all select 'orders', user_id, status, 0, count(*) from orders group by user_id, status
      union all select 'webhook_endpoints', 0, '', 0, count(*) from webhook_endpoints having count(*) > 0
      union all select 'webhook_endpoints', owner_id, '', 0, count(*) from webhook_endpoints group by owner_id
      union all select 'users', 0, '', 0, count(*) from users having count(*) > 0
      union all select 'articles', 0, '', 0, count(*) from articles having count(*) > 0
      union all select 'products', 0, '', 0, count(*) from products having count(*) > 0;
    end $$`.execute(db)
  await sql`select recount_rows()`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['orders', 'webhook_endpoints', ...PLAIN_TABLES]) {
    for (const suffix of ['insert', 'delete', 'update', 'truncate']) {
      await sql.raw(`drop trigger if exists ${table}_counted_${suffix} on ${table}`).execute(db)
    }
  }
  for (const fn of ['count_orders', 'count_webhook_endpoints', 'count_rows', 'forget_counts', 'recount_rows']) {
    await sql.raw(`drop function if exists ${fn}()`).execute(db)
  }
  await db.schema.dropTable('row_counts').execute()
}
