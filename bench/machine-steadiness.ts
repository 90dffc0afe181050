/**
 * How steady the machine itself is: the same busy loop on every core at once, counted in short
 * windows. On a quiet machine every window does about the same work; on a shared one (a virtual
 * machine whose host runs other guests) the rate moves, and so does every server's speed, however
 * the rounds are paired. The bench measures it before and after its rounds, with nothing else
 * running, so that a reader can tell a ratio that moved from a machine that did
 * (docs/performance.md, "How steady the machine was").
 */
import os from 'node:os'
import { Worker } from 'node:worker_threads'
import { median } from './ratios.ts'

export interface Steadiness {
  /** Length of a window, and how many there were on each core. */
  windowMs: number
  windows: number
  cores: number
  /** Standard deviation of the windows' rates, as a percentage of their mean. */
  spreadPercent: number
  /** The slowest and the fastest window, as a fraction of the median window. */
  lowest: number
  highest: number
}

// A fixed loop with no allocation and no I/O: its rate is the core's speed and nothing else.
const LOOP = `
const { parentPort, workerData } = require('node:worker_threads')
const rates = []
let x = 1
const end = Date.now() + workerData.seconds * 1000
while (Date.now() < end) {
  const start = performance.now()
  let count = 0
  while (performance.now() - start < workerData.windowMs) {
    for (let i = 0; i < 1000; i++) x = (x * 1103515245 + 12345) % 2147483648
    count++
  }
  rates.push(count / (performance.now() - start))
}
parentPort.postMessage({ rates, x })
`

const WINDOW_MS = 250

export async function measureSteadiness(seconds: number): Promise<Steadiness> {
  const cores = os.cpus().length
  const perCore = await Promise.all(
    Array.from(
      { length: cores },
      () =>
        new Promise<number[]>((resolve, reject) => {
          const worker = new Worker(LOOP, { eval: true, workerData: { seconds, windowMs: WINDOW_MS } })
          worker.once('message', (message: { rates: number[] }) => resolve(message.rates))
          worker.once('error', reject)
        }),
    ),
  )
  const rates = perCore.flat()
  const medianRate = median(rates) ?? 1
  const mean = rates.reduce((sum, rate) => sum + rate, 0) / rates.length
  const spread = Math.sqrt(rates.reduce((sum, rate) => sum + (rate - mean) ** 2, 0) / rates.length)
  const round3 = (value: number) => Math.round(value * 1000) / 1000
  return {
    windowMs: WINDOW_MS,
    windows: Math.min(...perCore.map((list) => list.length)),
    cores,
    spreadPercent: Math.round((spread / mean) * 1000) / 10,
    lowest: round3(Math.min(...rates) / medianRate),
    highest: round3(Math.max(...rates) / medianRate),
  }
}
