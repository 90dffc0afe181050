/**
 * Where a statement runs when streaming replicas are configured (decisions §15): the one place that
 * routes. A request that only reads (a REST GET, a GraphQL query) runs inside a ReadScope; a
 * statement of such a request that only reads, outside a transaction, goes to a replica the
 * ReplicaSet picks (healthy, and past the caller's last write); everything else goes to the
 * primary: transactions, writes, statements outside any request (relay, webhook worker,
 * delivery, subscriptions). A transaction or a write in a read request pins the rest of it to
 * the primary and marks it as having written, so its answer carries the commit position.
 *
 * The driver decides per checkout, lazily: a checkout that begins a transaction is taken from the
 * primary; one that runs a read first from the replica. A replica that fails the read (stopped,
 * frozen past the deadline, cancelled by a recovery conflict) is reported to the ReplicaSet and
 * the read is run again on the primary: a read outside a transaction changes nothing, so running
 * it twice is safe, and a lost replica never turns into a 5xx.
 *
 * Without replicas none of this exists: app.db is the primary's own Kysely, and a read pays
 * nothing for it.
 */
import type { AsyncLocalStorage } from 'node:async_hooks'
import type { CompiledQuery, DatabaseConnection, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely'
import type { ReplicaSet } from './replicas.ts'

export interface ReadScope {
  /** No statement of this request may go to a replica any more (it wrote, or it is a mutation). */
  pinned: boolean
  /** This request wrote on the primary: its answer names the commit position. */
  wrote: boolean
  /**
   * The position a replica must have replayed to serve this request (the caller's last write),
   * found out once, when the first statement is routed; undefined: any healthy replica will do.
   */
  minimumPosition: () => Promise<bigint | undefined>
}

/** Statements that only read: a select (or a with … select) naming nothing that writes or locks. */
const READS = /^\s*(select|with)\b/i
const WRITES =
  /\b(insert|update|delete|merge|nextval|setval|pg_notify|pg_advisory\w*|pg_try_advisory\w*|for\s+(update|share|no\s+key|key))\b/i
const MAX_KNOWN = 4096

/** Whether a statement only reads: decided once per statement text (hot reads reuse theirs). */
function readOnlyClassifier(): (sql: string) => boolean {
  const known = new Map<string, boolean>()
  return (sql) => {
    let readOnly = known.get(sql)
    if (readOnly === undefined) {
      readOnly = READS.test(sql) && !WRITES.test(sql)
      if (known.size < MAX_KNOWN) known.set(sql, readOnly)
    }
    return readOnly
  }
}

type Compile = QueryCompiler['compileQuery']

class RoutedConnection implements DatabaseConnection {
  driver: Driver | undefined
  inner: DatabaseConnection | undefined
  replica: string | undefined

  private readonly routing: ReadRoutingDriver

  constructor(routing: ReadRoutingDriver) {
    this.routing = routing
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.inner) await this.routing.bind(this, query.sql)
    const bound = inner(this)
    if (this.replica === undefined) {
      if (!this.routing.readOnly(query.sql)) this.routing.wrote()
      return bound.executeQuery<R>(query)
    }
    try {
      return await bound.executeQuery<R>(query)
    } catch (error) {
      // The replica failed a read: the primary answers it (see the file's comment).
      await this.routing.failOver(this, error)
      return inner(this).executeQuery<R>(query)
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!this.inner) await this.routing.bind(this, undefined)
    yield* inner(this).streamQuery<R>(query, chunkSize)
  }
}

export class ReadRoutingDriver implements Driver {
  readonly readOnly = readOnlyClassifier()

  private readonly primary: Driver
  private readonly replicas: ReplicaSet
  private readonly scopes: AsyncLocalStorage<ReadScope>

  constructor(primary: Driver, replicas: ReplicaSet, scopes: AsyncLocalStorage<ReadScope>) {
    this.primary = primary
    this.replicas = replicas
    this.scopes = scopes
  }

  async init(): Promise<void> {
    await this.primary.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this)
  }

  /** Takes the checkout's connection: from a replica for a read of a read scope that one can serve, else from the primary. */
  async bind(connection: RoutedConnection, sql: string | undefined): Promise<void> {
    const scope = this.scopes.getStore()
    if (scope && !scope.pinned && sql !== undefined && this.readOnly(sql)) {
      const replica = this.replicas.pick(await scope.minimumPosition())
      if (replica) {
        try {
          connection.inner = await replica.driver.acquireConnection()
          connection.driver = replica.driver
          connection.replica = replica.name
          return
        } catch (error) {
          this.replicas.failed(replica.name, error)
        }
      }
    }
    connection.driver = this.primary
    connection.inner = await this.primary.acquireConnection()
  }

  async failOver(connection: RoutedConnection, error: unknown): Promise<void> {
    if (connection.replica !== undefined) this.replicas.failed(connection.replica, error)
    if (connection.driver && connection.inner) await connection.driver.releaseConnection(connection.inner).catch(() => {})
    connection.replica = undefined
    connection.driver = this.primary
    connection.inner = await this.primary.acquireConnection()
  }

  /** The request wrote on the primary: nothing more of it reads from a replica, and its answer names the position. */
  wrote(): void {
    const scope = this.scopes.getStore()
    if (scope) {
      scope.pinned = true
      scope.wrote = true
    }
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const checkout = routed(connection)
    if (!checkout.inner) await this.bind(checkout, undefined)
    this.wrote()
    await this.primary.beginTransaction(inner(checkout), settings)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.primary.commitTransaction(inner(connection))
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.primary.rollbackTransaction(inner(connection))
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    if (!this.primary.savepoint) throw new Error('the primary driver has no savepoints')
    await this.primary.savepoint(inner(connection), name, compile)
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    if (!this.primary.rollbackToSavepoint) throw new Error('the primary driver has no savepoints')
    await this.primary.rollbackToSavepoint(inner(connection), name, compile)
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    if (!this.primary.releaseSavepoint) throw new Error('the primary driver has no savepoints')
    await this.primary.releaseSavepoint(inner(connection), name, compile)
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const checkout = routed(connection)
    if (checkout.driver && checkout.inner) await checkout.driver.releaseConnection(checkout.inner)
    checkout.inner = undefined
    checkout.driver = undefined
  }

  /** The primary's and the replicas' pools are ended by whoever opened them. */
  async destroy(): Promise<void> {}
}

function routed(connection: DatabaseConnection): RoutedConnection {
  if (!(connection instanceof RoutedConnection)) throw new Error('a connection this driver did not hand out')
  return connection
}

function inner(connection: DatabaseConnection): DatabaseConnection {
  const bound = routed(connection).inner
  if (!bound) throw new Error('a transaction on a routed connection that holds none')
  return bound
}
