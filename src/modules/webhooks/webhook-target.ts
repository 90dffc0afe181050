/**
 * Where a webhook may be sent (decisions §13): never to the service's own network. A target URL
 * is checked when an endpoint is created and again before every attempt (its DNS may have changed
 * since), and the attempt connects to the very address that was checked (`pinnedLookup`), so a
 * second DNS answer cannot slip a private address in between (DNS rebinding).
 *
 * Refused unless WEBHOOK_ALLOW_PRIVATE=true: http (a signed payload in clear text), and any address
 * that is not global unicast. The classification is ipaddr.js's `range()`, which follows IANA's
 * special-purpose address registries (docs/events.md, "Webhooks"); only what it leaves open is
 * decided here: the IPv4 address carried inside an IPv6 one (mapped, translated, NAT64's well-known
 * prefix, 6to4) is classified in turn; prefixes that lead into someone's own network whatever they
 * carry (NAT64's local-use 64:ff9b:1::/48, Teredo, the deprecated IPv4-compatible ::/96) and IPv6
 * outside 2000::/3 (the only global unicast space IANA allocates) are refused whole.
 */
import { lookup } from 'node:dns/promises'
import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { ApiError } from '../../errors.ts'

/** Global unicast IPv6 (IANA's IPv6 address space): the rest is reserved by the IETF. */
const globalUnicastIpv6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3]
/** NAT64's well-known prefix (RFC 6052): its last 32 bits are the IPv4 address reached. */
const nat64WellKnown: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96]

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])

/** The IPv4 address an IPv6 address of `range` delivers to, when that is how it is routed. */
function carriedIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined {
  const parts = address.parts
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d (IPv4-translated)
      return ipv4Of(parts[6]!, parts[7]!)
    case 'rfc6052': // 64:ff9b::a.b.c.d; 64:ff9b:1::/48 (local use) is refused whole
      return address.match(nat64WellKnown) ? ipv4Of(parts[6]!, parts[7]!) : undefined
    case '6to4': // 2002:aabb:ccdd::/48
      return ipv4Of(parts[1]!, parts[2]!)
    default:
      return undefined
  }
}

/** Whether a literal IP address is one webhooks must not reach (anything but global unicast). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return ipaddr.IPv4.parse(address).range() !== 'unicast'
  if (family !== 6) return true
  const ipv6 = ipaddr.IPv6.parse(address)
  const range: string = ipv6.range()
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052' || range === '6to4') {
    const inner = carriedIpv4(ipv6, range)
    return inner === undefined || inner.range() !== 'unicast'
  }
  if (range !== 'unicast') return true
  return !ipv6.match(globalUnicastIpv6)
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
    if (refused)
      throw targetRefused(
        `The host ${host} resolves to ${refused.address}, a loopback, private, link-local, reserved or other special-purpose address.`,
      )
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
