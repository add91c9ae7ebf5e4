// The JavaScript sanity pass of `make lint` (scripts/lint.sh), after `node --check` of each file:
//
//     node scripts/check-js.mjs FILE...
//
// The TypeScript compiler (the root devDependency) reads the files as plain JavaScript and only
// the diagnostics that need no type information are reported: syntax and grammar errors,
// undeclared names, relative imports that resolve to no file, variables, imports and
// parameters never used, unreachable code, redeclarations, use before declaration and
// assignment to a const. Type errors are not reported: the files carry no type annotations
// (the package's types are its hand-written .d.ts files, checked by `npm run typecheck`), and
// Node's own types (@types/node) are not a dependency, so Node's globals and `node:` modules,
// unknown to the compiler, are accepted by name.
import path from 'node:path'
import ts from 'typescript'

// Diagnostics that depend on names and syntax only (codes from TypeScript's
// diagnosticMessages.json). Codes below 2000 (grammar) are always reported.
const NAME_CODES = new Set([
  2304, // Cannot find name 'x'.
  2552, // Cannot find name 'x'. Did you mean 'y'?
  2580, 2591, 2592, 2593, // Cannot find name 'x'. Do you need to install type definitions...?
])
const OTHER_CODES = new Set([
  2300, // Duplicate identifier 'x'.
  2307, // Cannot find module 'x' (reported for relative specifiers only).
  2393, // Duplicate function implementation.
  2448, 2449, // Block-scoped variable / class 'x' used before its declaration.
  2451, // Cannot redeclare block-scoped variable 'x'.
  2588, // Cannot assign to 'x' because it is a constant.
  2695, // Left side of comma operator is unused and has no side effects.
  6133, 6138, 6192, 6196, 6198, 6199, // Declared (imported, destructured) but never used.
  7027, // Unreachable code detected.
  7028, // Unused label.
])
// Node's globals that are not in the ECMAScript and DOM libraries the compiler is given.
const NODE_GLOBALS = new Set([
  'process', 'Buffer', 'require', 'module', 'exports', '__dirname', '__filename', 'global',
  'setImmediate', 'clearImmediate',
])

const files = process.argv.slice(2).map((f) => path.resolve(f))
if (files.length === 0) {
  console.error('usage: node scripts/check-js.mjs FILE...')
  process.exit(2)
}
const program = ts.createProgram(files, {
  allowJs: true,
  checkJs: true,
  noEmit: true,
  strict: false,
  noUnusedLocals: true,
  noUnusedParameters: true,
  allowUnreachableCode: false,
  allowUnusedLabels: false,
  target: ts.ScriptTarget.ESNext,
  lib: ['lib.esnext.d.ts', 'lib.dom.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: [],
  skipLibCheck: true,
})

const roots = new Set(files)
const problems = []
for (const source of program.getSourceFiles()) {
  if (!roots.has(path.resolve(source.fileName))) continue
  const diagnostics = [
    ...program.getSyntacticDiagnostics(source),
    ...program.getSemanticDiagnostics(source).filter((d) => reported(d, source)),
  ]
  for (const d of diagnostics) {
    const { line, character } = source.getLineAndCharacterOfPosition(d.start ?? 0)
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    const where = path.relative(process.cwd(), source.fileName)
    problems.push(`${where}:${line + 1}:${character + 1}: TS${d.code} ${message}`)
  }
}
for (const p of problems) console.error(p)
if (problems.length > 0) {
  console.error(`check-js: ${problems.length} problem(s) in the JavaScript files`)
  process.exit(1)
}
console.error(`check-js: ${files.length} files, no problem`)

function reported(d, source) {
  const text = d.start === undefined ? '' : source.text.slice(d.start, d.start + d.length)
  const name = text.replace(/^['"]|['"]$/g, '')
  if (d.code < 2000) return true
  if (NAME_CODES.has(d.code)) return !NODE_GLOBALS.has(name) && !name.startsWith('node:')
  if (d.code === 2307) return name.startsWith('.')
  return OTHER_CODES.has(d.code)
}
