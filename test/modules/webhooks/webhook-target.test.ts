/**
 * SSRF guard (decisions §13): a webhook URL whose host is, or resolves to, a loopback, private or
 * link-local address (IPv4 or IPv6, mapped forms included) is refused at creation without
 * WEBHOOK_ALLOW_PRIVATE, and so is plain http; and a target that turns private after creation
 * gets nothing.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { isPrivateAddress } from '../../../src/modules/webhooks/webhook-target.ts'
import { bearer, build } from '../../helper.ts'
import { answer, startReceiver } from './receiver.ts'

/** Addresses that were accepted before the classification followed IANA's registries (ipaddr.js). */
const specialPurpose = [
  '192.0.2.1',
  '198.51.100.1',
  '203.0.113.1',
  '192.88.99.1',
  '2001:db8::1',
  '100::1',
  '64:ff9b:1::a00:1',
  '::ffff:0:7f00:1',
  '2001::1',
]

t.test('private, loopback, link-local and reserved addresses are recognised in every form', async (t) => {
  const refused = [
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'fc00::abcd',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '::127.0.0.1',
    '2002:7f00:1::',
    'ff02::1',
    // IANA's special-purpose ranges (documentation, benchmarking, relays, translation prefixes)
    ...specialPurpose,
    '255.255.255.255',
    '198.18.0.1',
    '192.0.0.8',
    '::ffff:0:a00:1',
    '64:ff9b::a00:1',
    '64:ff9b:1::808:808',
    '2002:c000:201::1',
    '2001:2::1',
    '3fff::1',
    '5f00::1',
    '100:0:0:1::1',
    '4000::1',
  ]
  const allowed = [
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '::ffff:0:808:808',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ]
  for (const address of refused) t.ok(isPrivateAddress(address), `${address} is refused`)
  for (const address of allowed) t.notOk(isPrivateAddress(address), `${address} is allowed`)
})

t.test('without WEBHOOK_ALLOW_PRIVATE a loopback or http target is 422 WEBHOOK_TARGET_REFUSED and nothing is stored', async (t) => {
  const app = await build(t)
  for (const url of [
    'https://127.0.0.1/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://localhost/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://10.1.2.3/hook',
    'http://93.184.215.14/hook',
    'https://user:pass@93.184.215.14/hook',
  ]) {
    const response = await app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(2), payload: { url } })
    t.equal(response.statusCode, 422, url)
    t.equal(response.json().code, 'WEBHOOK_TARGET_REFUSED', url)
    t.equal(response.json().errors[0].name, 'url')
  }
  const list = await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: bearer(2) })
  t.same(list.json().data, [])
})

t.test(
  'documentation, relay, discard, NAT64 local-use, IPv4-translated and Teredo targets are 422 WEBHOOK_TARGET_REFUSED; a public one is accepted',
  async (t) => {
    const app = await build(t)
    for (const address of specialPurpose) {
      const url = `https://${address.includes(':') ? `[${address}]` : address}/hook`
      const response = await app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(2), payload: { url } })
      t.equal(response.statusCode, 422, url)
      t.equal(response.json().code, 'WEBHOOK_TARGET_REFUSED', url)
      t.equal(response.json().errors[0].name, 'url', url)
    }
    const list = await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: bearer(2) })
    t.same(list.json().data, [], 'nothing was stored')
    const accepted = await app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: bearer(2),
      payload: { url: 'https://[2606:4700:4700::1111]/hook' },
    })
    t.equal(accepted.statusCode, 201, 'a public IPv6 target is accepted')
  },
)

t.test('a target is checked again at delivery: one stored while private targets were allowed gets nothing now', async (t) => {
  const receiver = await startReceiver(t, answer(200))
  const allowing = await build(t, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const created = await allowing.inject({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    headers: bearer(2),
    payload: { url: receiver.url },
  })
  t.equal(created.statusCode, 201)
  await allowing.close()
  // The same database under a server that refuses private targets (as if DNS had changed).
  const refusing = await build(t, {
    database: allowing.database,
    env: { WEBHOOK_POLL: '20ms', WEBHOOK_RETRY_SCHEDULE: '50ms' },
  })
  await refusing.inject({
    method: 'POST',
    url: '/api/v1/articles',
    headers: bearer(3, 'articles:write'),
    payload: { title: 'x', body: '.' },
  })
  const id = created.json().id
  for (let i = 0; ; i++) {
    const [delivery] = (
      await refusing.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${id}/deliveries`, headers: bearer(2) })
    ).json().data
    if (delivery?.attempts >= 1) {
      t.match(delivery.last_error, /must be https|loopback, private/)
      break
    }
    if (i > 200) throw new Error('no attempt recorded')
    await sleep(25)
  }
  t.equal(receiver.received.length, 0, 'the receiver was never called')
})
