// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * codegen/idempotency-key.ts: what an idempotency key is comes from openapi.yaml's `IdempotencyKey`
 * parameter, and the write path's rule (src/db/write.ts) is that schema, for both styles (decisions §7).
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { idempotencyKeyFileOf } from '../../codegen/idempotency-key.ts'
import { IdempotencyKeySchema } from '../../src/generated/openapi/idempotency-key.ts'
import { checkIdempotencyKey } from '../../src/db/write.ts'
import { ApiError } from '../../src/errors.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const contract = parse(await readFile(join(root, 'openapi.yaml'), 'utf8')) as Record<string, any>

t.test('the generated schema is the contract`s IdempotencyKey parameter schema, committed as generated', async (t) => {
  t.same(IdempotencyKeySchema, contract.components.parameters.IdempotencyKey.schema)
  const file = idempotencyKeyFileOf(contract)
  t.equal(file.contents, await readFile(join(root, file.path), 'utf8'))
})

t.test('a key is 1-255 printable ASCII characters, and a refusal names where the key came from', async (t) => {
  const refusal = (key: string) => {
    try {
      checkIdempotencyKey(key, { in: 'header', name: 'Idempotency-Key' })
      return undefined
    } catch (error) {
      return error
    }
  }
  t.equal(refusal('a'), undefined)
  t.equal(refusal(`${' ~'.repeat(127)}x`), undefined, '255 characters')
  for (const key of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there', '\u{1F600}']) {
    const error = refusal(key)
    t.ok(error instanceof ApiError, JSON.stringify(key))
    t.match(error, {
      status: 400,
      code: 'INVALID_IDEMPOTENCY_KEY',
      detail: 'An Idempotency-Key is 1-255 printable ASCII characters.',
      errors: [{ in: 'header', name: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }],
    })
  }
})
