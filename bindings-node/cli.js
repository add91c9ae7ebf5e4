#!/usr/bin/env node
'use strict'
// The `respload` command of the npm package (`npx respload run spec.toml`): the very command
// line of the Rust binary (`respload::cli::main` in the core), run through the native addon on
// a thread of its own, writing to this process's stdout and stderr.
//
// Ctrl-C, as the binary does it: the first stops the run in progress and its partial report is
// printed (exit code 0); a second exits at once with 130. The handler belongs to this process
// (the bin), never to the library.

const { Cli } = require('./native.js')

const cli = Cli.start(['respload', ...process.argv.slice(2)])
const onInterrupt = () => {
  if (cli.interrupt() > 1) process.exit(130)
}
process.on('SIGINT', onInterrupt)
cli.wait().then(
  (code) => {
    process.off('SIGINT', onInterrupt)
    process.exitCode = code
  },
  (err) => {
    process.off('SIGINT', onInterrupt)
    process.stderr.write(`respload: ${err.message}\n`)
    process.exitCode = 101
  },
)
