/**
 * Where a webhook may be sent (decisions §13): never to the service's own network. A target URL
 * is checked when an endpoint is created and again before every attempt (its DNS may have changed
 * since), and the attempt connects to the very address that was checked (`pinnedLookup`), so a
 * second DNS answer cannot slip a private address in between (DNS rebinding).
 *
 * Refused unless WEBHOOK_ALLOW_PRIVATE=true: http (a signed payload in clear text), and any address
 * that is loopback, private, link-local, unspecified, carrier-grade NAT, multicast or reserved, in
 * IPv4 or IPv6, including IPv4 written inside IPv6 (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
 * compatible `::a.b.c.d`, 6to4 `2002::/16`).
 */
import { lookup } from 'node:dns/promises'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { ApiError } from '../../errors.ts'

const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(network, prefix, 'ipv6')

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address)
  if (!groups) return undefined
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0)
  if (zeros(0, 5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!)
  if (zeros(0, 6)) return v4(groups[6]!, groups[7]!)
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6]!, groups[7]!)
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!)
  return undefined
}

/** An IPv6 address as its eight 16-bit groups (a dotted IPv4 tail included), undefined when it is not one. */
function expandIpv6(address: string): number[] | undefined {
  let text = address.split('%')[0]!
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const bytes = dotted[1]!.split('.').map(Number)
    text = `${text.slice(0, dotted.index)}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`
  }
  const [head, tail, extra] = text.split('::')
  if (extra !== undefined) return undefined
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : [])
  const start = parse(head)
  const end = parse(tail)
  const groups = tail === undefined ? start : [...start, ...new Array<number>(8 - start.length - end.length).fill(0), ...end]
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined
}

/** Whether a literal IP address is one webhooks must not reach. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, 'ipv4')
  if (family !== 6) return true
  const inner = embeddedIpv4(address)
  if (inner !== undefined && blocked.check(inner, 'ipv4')) return true
  return blocked.check(address.split('%')[0]!, 'ipv6')
}

export const targetRefused = (detail: string) =>
  new ApiError('WEBHOOK_TARGET_REFUSED', detail, { errors: [{ in: 'body', name: 'url', message: detail }] })

/** The URL's form: http(s), no credentials or fragment; https unless private targets are allowed. */
export function checkTargetUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw targetRefused('The URL is not an absolute URL.')
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw targetRefused(allowPrivate ? 'The URL must be http or https.' : 'The URL must be https.')
  }
  if (url.username !== '' || url.password !== '') throw targetRefused('The URL must not carry credentials.')
  if (url.hash !== '' || raw.includes('#')) throw targetRefused('The URL must not have a fragment.')
  return url
}

export interface ResolvedTarget {
  address: string
  family: 4 | 6
}

/**
 * The address to connect to for `url`: every address its host resolves to must be public (a host
 * with one private address among public ones is refused: which one a client picks is not ours to
 * know). Throws WEBHOOK_TARGET_REFUSED otherwise, or when the host does not resolve.
 */
export async function resolveTarget(url: URL, allowPrivate: boolean): Promise<ResolvedTarget> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  let addresses: Array<{ address: string; family: number }>
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }]
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true })
    } catch {
      throw targetRefused(`The host ${host} does not resolve.`)
    }
  }
  const first = addresses[0]
  if (!first) throw targetRefused(`The host ${host} does not resolve.`)
  if (!allowPrivate) {
    const refused = addresses.find((entry) => isPrivateAddress(entry.address))
    if (refused) throw targetRefused(`The host ${host} resolves to ${refused.address}, a loopback, private or link-local address.`)
  }
  return { address: first.address, family: first.family === 6 ? 6 : 4 }
}

/** A `lookup` for http.request that answers with the address already checked, whatever DNS says now. */
export function pinnedLookup(target: ResolvedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }])
    else callback(null, target.address, target.family)
  }
}
