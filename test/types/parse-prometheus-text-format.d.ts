// The parser ships no typings; this is the shape it returns (see its README).
declare module 'parse-prometheus-text-format' {
  export interface ParsedMetric {
    value?: string
    labels?: Record<string, string>
    buckets?: Record<string, string>
    count?: string
    sum?: string
  }
  export interface MetricFamily {
    name: string
    help: string
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
    metrics: ParsedMetric[]
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[]
}
