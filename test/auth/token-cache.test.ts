/**
 * A verified token is verified once: its Caller is cached per verifier until the token's
 * `exp`, in a bounded cache; a token past its `exp` is refused even when cached, and two apps never
 * share what they verified.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { createTokenSigner, createTokenVerifier, createVerifiedTokenCache, type TokenVerification } from '../../src/auth/tokens.ts'
import type { Caller } from '../../src/auth/caller.ts'
import { TEST_JWT_SECRET, tokenFor } from '../helper.ts'

/** JWT_MAX_LIFETIME's default. */
const DAY_MS = 24 * 3_600_000

/** An app's verifier with HS256 tokens only, called as the auth plugin calls it: synchronously for HS256. */
function hs256Verifier(secret: string): (token: string) => TokenVerification {
  const verifier = createTokenVerifier({ secret, issuer: undefined, userIdClaim: 'sub', maxLifetimeMs: DAY_MS, log: console })
  return (token) => {
    const verification = verifier.verify(token)
    if (verification instanceof Promise) throw new Error('an HS256 token is verified synchronously')
    return verification
  }
}

t.test('a token verified again gives the same Caller without rebuilding it', async (t) => {
  const verify = hs256Verifier(TEST_JWT_SECRET)
  const token = tokenFor(7, 'orders:read admin')
  const first = verify(token)
  const second = verify(token)
  t.ok(first.ok && second.ok)
  if (!first.ok || !second.ok) return
  t.equal(second.caller, first.caller, 'the very same object: scopes and user id are not parsed again')
  t.match(first.caller, { subject: '7', userId: 7, admin: true })
  t.same([...first.caller.scopes], ['orders:read', 'admin'])
})

t.test('a cached token is refused once its exp has passed', async (t) => {
  const verify = hs256Verifier(TEST_JWT_SECRET)
  const token = createTokenSigner(TEST_JWT_SECRET)({ sub: '7', scope: 'orders:read' }, 1)
  t.equal(verify(token).ok, true, 'valid, and now cached')
  // exp is whole seconds: wait until it is surely behind us.
  await sleep(2100)
  t.same(verify(token), { ok: false, reason: 'The token has expired.' })
})

t.test('the cache is bounded: the least recently used token goes first, and an expired entry is dropped', async (t) => {
  const cache = createVerifiedTokenCache(2)
  const caller = (expiresAt: number): Caller => ({ subject: '1', userId: 1, scopes: new Set(), admin: false, expiresAt })
  const a = caller(10_000)
  const b = caller(10_000)
  const c = caller(10_000)
  cache.set('a', a)
  cache.set('b', b)
  t.equal(cache.get('a', 0), a, 'a is used again: b is now the least recent')
  cache.set('c', c)
  t.equal(cache.get('b', 0), undefined, 'b was evicted')
  t.equal(cache.get('a', 0), a)
  t.equal(cache.get('c', 0), c)
  t.equal(cache.get('a', 10_000), undefined, 'not at or past exp')
  t.equal(cache.get('a', 0), undefined, 'and the expired entry is gone')
})

t.test('two verifiers (two apps) share nothing: a token one accepted is checked again by the other', async (t) => {
  const token = tokenFor(7)
  t.equal(hs256Verifier(TEST_JWT_SECRET)(token).ok, true)
  t.same(hs256Verifier('another-secret-0123456789abcdef0123456789')(token), {
    ok: false,
    reason: 'The token signature is invalid.',
  })
})
