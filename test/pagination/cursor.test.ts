// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/** Unit tests of the cursor codec and the sort and resume rules built on it (no app, no database). */
import t from 'tap'
import { createCursorCodec, parseSort, resumePosition, type CursorPosition } from '../../src/pagination/cursor.ts'

const codec = createCursorCodec('unit-test-secret-0123456789abcdef')
const position: CursorPosition = {
  list: 'orders',
  sort: '-created_at',
  filter: { status: 'paid', user_id: null },
  key: ['2026-01-02T03:04:05.000Z', 7],
}

t.test('a cursor decodes to the position it was made for, on its own list only', async (t) => {
  const cursor = codec.encode(position)
  t.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'opaque, URL-safe')
  t.same(codec.decode(cursor, 'orders'), position)
  t.throws(() => codec.decode(cursor, 'articles'), { status: 400, code: 'INVALID_CURSOR' }, 'another list refuses it')
})

t.test('an edited, truncated, foreign or malformed cursor is 400 INVALID_CURSOR', async (t) => {
  const cursor = codec.encode(position)
  const [payload, signature] = cursor.split('.') as [string, string]
  const edited = Buffer.from(
    JSON.stringify(['orders', '-created_at', { status: 'paid', user_id: null }, ['2026-01-02T03:04:05.000Z', 8]]),
  ).toString('base64url')
  const foreign = createCursorCodec('another-secret-0123456789abcdef01').encode(position)
  for (const [name, text] of Object.entries({
    edited: `${edited}.${signature}`,
    truncated: `${payload}.${signature.slice(0, -2)}`,
    foreign,
    'no signature': payload,
    'three parts': `${cursor}.x`,
    empty: '',
  })) {
    t.throws(() => codec.decode(text, 'orders'), { status: 400, code: 'INVALID_CURSOR' }, name)
  }
})

t.test('parseSort reads a leading minus as descending and refuses fields the list does not sort on', async (t) => {
  const fields = ['created_at', 'total', 'id'] as const
  t.same(parseSort('-created_at', fields), { field: 'created_at', descending: true })
  t.same(parseSort('total', fields), { field: 'total', descending: false })
  t.throws(() => parseSort('-name', fields), { status: 400, code: 'INVALID_SORT' })
})

t.test('resumePosition starts from the defaults without a cursor and keeps a cursor to its sort and filter', async (t) => {
  t.same(resumePosition(codec, 'orders', undefined, { sort: undefined, filter: { status: undefined } }, { sort: '-created_at' }), {
    sort: '-created_at',
    filter: { status: null },
    after: undefined,
  })
  const cursor = codec.encode(position)
  t.same(resumePosition(codec, 'orders', cursor, { sort: undefined, filter: { status: undefined } }, { sort: 'id' }), {
    sort: '-created_at',
    filter: position.filter,
    after: position.key,
  })
  t.same(
    resumePosition(codec, 'orders', cursor, { sort: '-created_at', filter: { status: 'paid' } }, { sort: 'id' }).after,
    position.key,
    'repeating the same sort and filter is allowed',
  )
  t.throws(
    () => resumePosition(codec, 'orders', cursor, { sort: 'total', filter: {} }, { sort: 'id' }),
    { status: 400, code: 'CURSOR_MISMATCH' },
    'another sort',
  )
  t.throws(
    () => resumePosition(codec, 'orders', cursor, { sort: undefined, filter: { status: 'pending' } }, { sort: 'id' }),
    { status: 400, code: 'CURSOR_MISMATCH' },
    'another filter',
  )
})
