// Runs once in CI: it reads no database, so .ci/run runs it in the embedded-database run only.
/**
 * Test processes start without tap's module-load recording while coverage is off
 * (test/setup/untracked-processes.ts, decisions §14 "How CI stays fast"): the hooks
 * @tapjs/processinfo asks for are declined, and a process a test starts carries neither its import
 * nor ours. If a tap release registers its hooks another way, this fails before CI slows down.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import module from 'node:module'
import { tmpdir } from 'node:os'

const coverageOff = process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0'

t.test('with coverage off, this process declined the recording hooks', { skip: !coverageOff && 'tap runs with coverage' }, async (t) => {
  t.equal(module.register.name, 'registerUnlessProcessInfo', "module.register declines @tapjs/processinfo's loader")
  if (module.registerHooks) t.equal(module.registerHooks.name, 'registerHooksUnlessProcessInfo', 'and so does module.registerHooks')
  t.notMatch(process.env.NODE_OPTIONS ?? '', /@tapjs\/processinfo|untracked-processes/, 'NODE_OPTIONS names neither import')
})

t.test(
  'a process a test starts, in another directory, loads neither import',
  { skip: !coverageOff && 'tap runs with coverage' },
  async (t) => {
    const script = [
      "const m = require('node:module')",
      'console.log(JSON.stringify({ options: process.env.NODE_OPTIONS ?? "", register: m.register.name }))',
    ].join(';')
    const child = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: tmpdir(), encoding: 'utf8' })) as {
      options: string
      register: string
    }
    t.notMatch(child.options, /@tapjs\/processinfo|untracked-processes/, "the child's NODE_OPTIONS names neither import")
    t.equal(child.register, 'register', "the child's module.register is Node's own")
  },
)
