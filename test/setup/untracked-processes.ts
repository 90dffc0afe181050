/**
 * Loaded first in every test process, before tap's own `--import` of @tapjs/processinfo (package.json
 * "tap" → "test-env" puts it in NODE_OPTIONS, whose imports run before those on the command line).
 *
 * @tapjs/processinfo hooks every module load to record which files a test process read, for
 * coverage and `tap --changed`. With coverage off (package.json "tap" → "disable-coverage"), no one
 * reads that record, and the hooks are the dearest part of a test process's start: on Node.js 22 they
 * run on a loader thread of their own, about 1.4 s of CPU per test process, and about 0.6 s on
 * Node.js 24 (decisions §14, "How CI stays fast"). So, with coverage off, the hooks that
 * @tapjs/processinfo asks for are declined, and the processes a test starts (servers, scripts,
 * generators) start without tap's import at all. With coverage on, nothing here changes.
 */
import module from 'node:module'

const PROCESSINFO = '@tapjs/processinfo'
const coverageOff = process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0'

// This file's own entry goes too: it names a path relative to the project, which a process started
// in another directory would not find.
const ownEntry = /^--import=(?:\.\/)?test\/setup\/untracked-processes\.ts$/
// (NODE_OPTIONS separates by spaces; the entries here hold file URLs, which have none.)
process.env.NODE_OPTIONS = (process.env.NODE_OPTIONS ?? '')
  .split(' ')
  .filter((option) => {
    const unquoted = option.replace(/^"(.*)"$/, '$1')
    return !ownEntry.test(unquoted) && !(coverageOff && unquoted.includes(PROCESSINFO))
  })
  .join(' ')

if (coverageOff) {
  // What @tapjs/processinfo would do for this process besides the hooks: add itself to the
  // environment of every process this one starts, and write its record at exit. It skips both for
  // the process this names.
  process.env.__TAPJS_PROCESSINFO_TESTING_NO_REGISTER__ = String(process.pid)

  // Node.js 22: the asynchronous hooks, registered by the module's URL.
  const register = module.register
  module.register = function registerUnlessProcessInfo(
    specifier: string | URL,
    parentURL?: string | URL | module.RegisterOptions<unknown>,
    options?: module.RegisterOptions<unknown>,
  ): void {
    if (String(specifier).includes(PROCESSINFO)) return
    Reflect.apply(register, module, [specifier, parentURL, options])
  }

  // Node.js 24: the synchronous hooks, which name no module: the caller is known by its stack.
  const registerHooks = module.registerHooks
  if (registerHooks) {
    module.registerHooks = function registerHooksUnlessProcessInfo(hooks) {
      if (new Error().stack?.includes(PROCESSINFO)) return { deregister() {} }
      return registerHooks.call(module, hooks)
    }
  }
}
