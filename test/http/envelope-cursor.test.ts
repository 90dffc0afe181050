/**
 * Envelope A carries the next page's raw cursor as `page.cursor` beside the `page.next` URL,
 * so an SDK pages on with `?cursor=` and never parses a URL. Every response here is
 * also checked against openapi.yaml by the test helper.
 */
import t from 'tap'
import { bearer, build } from '../helper.ts'

const admin = bearer(1, 'admin')

t.test(
  'on every list operation page.cursor is the cursor of page.next, null with it at the end, and paging by it alone visits every record once',
  async (t) => {
    const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
    for (const [path, key] of [
      ['/api/v1/orders', 'id'],
      ['/api/v1/articles', 'id'],
      ['/api/v1/users', 'id'],
      ['/api/v1/products', 'sku'],
    ] as const) {
      const all = (await app.inject({ method: 'GET', url: `${path}?limit=100`, headers: admin })).json()
      const expected = all.data.map((record: Record<string, unknown>) => record[key])
      t.equal(all.page.cursor, null, `${path}: one page holds everything, so no cursor`)
      const seen: unknown[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const response: { statusCode: number; json(): any } = await app.inject({
          method: 'GET',
          url: `${path}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          headers: admin,
        })
        t.equal(response.statusCode, 200)
        const body: any = response.json()
        seen.push(...body.data.map((record: Record<string, unknown>) => record[key]))
        if (body.page.next === null) t.equal(body.page.cursor, null, `${path}: no next page, no cursor`)
        else
          t.equal(body.page.cursor, new URL(body.page.next).searchParams.get('cursor'), `${path}: page.cursor is next's cursor parameter`)
        cursor = body.page.cursor
        pages++
      } while (cursor !== null && pages < 50)
      t.same(seen, expected, `${path}: every record once, in order, over ${pages} pages`)
      t.ok(pages > 1, `${path}: several pages`)
    }
  },
)

t.test('a sparse page carries page.cursor too', async (t) => {
  const app = await build(t, { env: { EVENTS_RELAY: 'false' } })
  const body = (
    await app.inject({
      method: 'GET',
      url: '/api/v1/orders?limit=1&fields=id,total',
      headers: admin,
    })
  ).json()
  t.type(body.page.cursor, 'string')
  t.same(Object.keys(body.page).sort(), ['cursor', 'next', 'total'])
})
