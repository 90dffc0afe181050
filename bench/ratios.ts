/**
 * How the bench turns rounds into ratios, and how far a ratio can be trusted: the median of the
 * paired rounds' ratios, and the interval in which the median of all such rounds lies with 95 %
 * confidence (docs/performance.md, "How far a ratio can be trusted").
 */

export const median = (values: readonly number[]): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The part of a round that pairs: whether it was accepted, and the value read off it. */
export interface PairedRound {
  rejected: string | null
}

/**
 * service ÷ baseline of each round in which both were accepted and both have the value (the
 * service's round k with the baseline's round k, measured one after the other).
 */
export function pairedRatios<R extends PairedRound>(
  service: readonly R[],
  baseline: readonly R[],
  value: (round: R) => number | null,
): number[] {
  const ratios: number[] = []
  for (let index = 0; index < Math.min(service.length, baseline.length); index++) {
    const a = service[index]!
    const b = baseline[index]!
    const x = value(a)
    const y = value(b)
    if (a.rejected === null && b.rejected === null && x !== null && y !== null && y > 0) ratios.push(x / y)
  }
  return ratios
}

const binomialCoefficients = (n: number): number[] => {
  const row = [1]
  for (let k = 1; k <= n; k++) row.push((row[k - 1]! * (n - k + 1)) / k)
  return row
}

/**
 * A distribution-free 95 % confidence interval of the median: the k-th smallest and k-th largest
 * of n values, with the largest k for which at least 95 % of the binomial(n, ½) mass lies between
 * them (n = 12: the 3rd and the 10th, 96 %). Null under 6 values, where no such k exists.
 */
export function medianInterval(values: readonly number[]): [number, number] | null {
  const n = values.length
  if (n < 6) return null
  const sorted = [...values].sort((a, b) => a - b)
  const mass = binomialCoefficients(n).map((count) => count / 2 ** n)
  let k = 0
  // P(k ≤ ... ) : the interval [x(k+1), x(n-k)] misses the median with probability 2·P(B ≤ k).
  let tail = mass[0]!
  while (k + 1 < n / 2 && 2 * (tail + mass[k + 1]!) <= 0.05) {
    k++
    tail += mass[k]!
  }
  return [sorted[k]!, sorted[n - 1 - k]!]
}
