/**
 * The ownership rule for the PostGraphile peer, as PostGraphile's users write it: row-level
 * security on the bench's own database, read from the verified JWT's claims that the server puts
 * in `jwt.claims.*` settings for each transaction, under a role of its own (a superuser, which the
 * bench connects as, bypasses RLS). The harness applies these to the database it created and
 * drops the role at the end; nothing else is touched.
 */
export function postgraphilePolicyStatements(role: string): string[] {
  const r = `"${role}"`
  return [
    `create role ${r} nologin`,
    // So that the bench's own user may SET ROLE to it even when it is not a superuser.
    `grant ${r} to current_user`,
    `grant usage on schema public to ${r}`,
    `grant select on companies, users, orders, order_items to ${r}`,
    // Helpers out of the exposed schema (PostGraphile would publish functions of `public`).
    'create schema bench_auth',
    `create function bench_auth.caller_id() returns int language sql stable
       as $$ select nullif(current_setting('jwt.claims.sub', true), '')::int $$`,
    `create function bench_auth.caller_has(scope text) returns boolean language sql stable
       as $$ select coalesce(scope = any(string_to_array(current_setting('jwt.claims.scope', true), ' ')), false) $$`,
    `grant usage on schema bench_auth to ${r}`,
    // The service's rules: a user reads their own record and orders (with orders:read), an admin all.
    // `(select …)` makes each check an init plan, evaluated once per statement rather than per row.
    'alter table users enable row level security',
    `create policy users_self on users for select to ${r}
       using ((select bench_auth.caller_has('admin')) or id = (select bench_auth.caller_id()))`,
    'alter table orders enable row level security',
    `create policy orders_owner on orders for select to ${r}
       using ((select bench_auth.caller_has('admin'))
              or ((select bench_auth.caller_has('orders:read')) and user_id = (select bench_auth.caller_id())))`,
    'alter table order_items enable row level security',
    `create policy items_of_visible_orders on order_items for select to ${r}
       using (exists (select 1 from orders where orders.id = order_items.order_id))`,
  ]
}
