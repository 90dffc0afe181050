/**
 * The highest heap and RSS a process reaches while a load runs, sampled every `intervalMs`: what
 * the load scripts (events-load, webhook-load) and the event load test print. `stop` ends the
 * sampling and gives the peaks; a peak is at least the reading at start.
 */
export interface MemoryPeaks {
  heapPeak: number
  rssPeak: number
}

export function sampleMemoryPeaks(intervalMs = 50): { stop(): MemoryPeaks } {
  const peaks: MemoryPeaks = { heapPeak: 0, rssPeak: 0 }
  const sample = () => {
    const usage = process.memoryUsage()
    peaks.heapPeak = Math.max(peaks.heapPeak, usage.heapUsed)
    peaks.rssPeak = Math.max(peaks.rssPeak, usage.rss)
  }
  sample()
  const timer = setInterval(sample, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      return { ...peaks }
    },
  }
}
