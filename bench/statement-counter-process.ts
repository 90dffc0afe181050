/**
 * Hosts the statement-counting proxies in a process of their own, so that the load generator's
 * event loop (in the harness) never delays a server's database round trips. Started with IPC by
 * harness.ts: argv is the upstream host, its port, then one proxy name per server.
 */
import { type StatementCounter, startStatementCounter } from './statement-counter.ts'

const [host, port, ...names] = process.argv.slice(2)
if (!host || !port || names.length === 0 || !process.send) throw new Error('usage: fork with IPC: <host> <port> <name>...')

const counters = new Map<string, StatementCounter>()
for (const name of names) counters.set(name, await startStatementCounter({ host, port: Number(port) }))

process.send({ ports: Object.fromEntries([...counters].map(([name, counter]) => [name, counter.port])) })
process.on('message', (message) => {
  if (message === 'count')
    process.send?.({ counts: Object.fromEntries([...counters].map(([name, counter]) => [name, counter.statements()])) })
  if (message === 'close') void Promise.all([...counters.values()].map((counter) => counter.close())).then(() => process.exit(0))
})
process.on('disconnect', () => process.exit(0))
