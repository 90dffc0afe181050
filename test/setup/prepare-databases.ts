/**
 * tap's `before` step: build the database templates every test file clones. The work runs in a
 * worker thread started without tap's --import hooks: those record the coverage of what the step
 * runs, which tap reports (failing the run below 100 %) even with coverage disabled.
 */
import { Worker } from 'node:worker_threads'

const worker = new Worker(new URL('./build-templates.ts', import.meta.url), {
  execArgv: process.execArgv.filter((argument) => !argument.startsWith('--import') && argument !== '--liftoff-only'),
})
const exitCode = await new Promise<number>((resolve, reject) => {
  worker.once('error', reject)
  worker.once('exit', resolve)
})
if (exitCode !== 0) throw new Error(`Building the test database templates failed (worker exit code ${exitCode}).`)
