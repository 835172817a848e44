// Typed tables everywhere a tensor is named: the scanner behind tests/architecture/typed-tables.test.ts.
//
// Tensors live in arenas (src/gpu/arena.ts). A layout function places each tensor by name and
// returns a typed table of BufferSlices (activations.ts, param-tensors.ts, the decoder's work, the
// NSA core's saved/scratch tensors, bench:nsa's training tensors, …); resolveLayout runs it over
// the arena, and code reads tensors by field, so a misspelt tensor is a type error.
//
// A string arena look-up is any reference to one of the members of the `Arena` interface that
// reach a tensor by its name — `get(name)`, `has(name)` and `entries()` (names with their slices) —
// as the TypeScript checker resolves it, so every spelling counts: a call (`arena.get('q')`,
// `createArena(…).get('t')`), a member read without a call (`arena.get.bind(arena)`), an element
// access (`arena['get']`), a destructuring (`const { get } = arena`), and a wrapper
// (`const W = (n) => arena.get(n)` is reported where it reads `arena.get`). Maps, sets and other
// types with a `get` are not arenas and do not count. A look-up is allowed only inside a function
// named in LOOKUP_ALLOWED, in its file.
import { join } from 'node:path';

import ts from 'typescript';

import { sourceFiles } from './layers';

/** The members of Arena that reach a tensor by name. */
export const NAME_MEMBERS = ['get', 'has', 'entries'] as const;

/** Where the Arena interface is declared (repository-relative). */
export const ARENA_FILE = 'src/gpu/arena.ts';

/** Functions allowed to look a tensor up by name, with the reason. */
export const LOOKUP_ALLOWED: ReadonlyArray<{ file: string; fn: string; why: string }> = [
  {
    file: ARENA_FILE,
    fn: 'resolveLayout',
    why: 'the resolving pass of every layout function: the one place a placed name becomes a slice',
  },
];

export interface ArenaLookup {
  /** Repository-relative path. */
  file: string;
  /** 1-based line. */
  line: number;
  /** The member reached ('get', 'has', 'entries'). */
  member: string;
  /** The source text of the reference (e.g. `arena.get`). */
  text: string;
  /** Named functions around it, innermost first. */
  functions: string[];
}

/** The compiler options of tsconfig.json (the project's own, so types resolve as in `npm run typecheck`). */
export function projectOptions(root: string): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('tsconfig.json could not be read');
  return { ...parsed.options, noEmit: true };
}

/** A program over every source file of src/. */
export function srcProgram(root: string): ts.Program {
  return ts.createProgram(
    sourceFiles(root).map((f) => join(root, f)),
    projectOptions(root),
  );
}

/**
 * A program over src/gpu/arena.ts (read from disk) and planted files given as text, by
 * repository-relative path; `old` lends its parsed library files so this is quick.
 */
export function plantedProgram(root: string, planted: Readonly<Record<string, string>>, old?: ts.Program): ts.Program {
  const options = projectOptions(root);
  const host = ts.createCompilerHost(options);
  const virtual = new Map(Object.entries(planted).map(([p, text]) => [join(root, p), text]));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, lang, onError, create) => {
    const text = virtual.get(fileName);
    return text !== undefined ? ts.createSourceFile(fileName, text, lang, true) : getSourceFile(fileName, lang, onError, create);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (f) => virtual.has(f) || fileExists(f);
  const readFile = host.readFile.bind(host);
  host.readFile = (f) => virtual.get(f) ?? readFile(f);
  return ts.createProgram({ rootNames: [join(root, ARENA_FILE), ...virtual.keys()], options, host, oldProgram: old });
}

/** Is this symbol one of Arena's by-name members (declared in `interface Arena` of src/gpu/arena.ts)? */
function isArenaNameMember(symbol: ts.Symbol | undefined, arenaFile: string): boolean {
  if (!symbol || !(NAME_MEMBERS as readonly string[]).includes(symbol.name)) return false;
  return (symbol.declarations ?? []).some((d) => {
    const owner = d.parent;
    return ts.isInterfaceDeclaration(owner) && owner.name.text === 'Arena' && d.getSourceFile().fileName === arenaFile;
  });
}

/** Names of the named functions around a node, innermost first (declarations, methods, and arrows or function expressions bound to a name). */
function enclosingFunctions(node: ts.Node): string[] {
  const out: string[] = [];
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name) out.push(n.name.getText());
    else if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && ts.isVariableDeclaration(n.parent) && ts.isIdentifier(n.parent.name))
      out.push(n.parent.name.text);
  }
  return out;
}

/** Every reference to Arena's by-name members in the program's files under `dir` (repository-relative), allowed or not. */
export function arenaLookups(program: ts.Program, root: string, dir = 'src'): ArenaLookup[] {
  const checker = program.getTypeChecker();
  const arenaFile = join(root, ARENA_FILE);
  const prefix = join(root, dir) + '/';
  const out: ArenaLookup[] = [];
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(prefix) || sf.isDeclarationFile) continue;
    const file = sf.fileName.slice(root.length + 1);
    const hit = (node: ts.Node, member: string) =>
      out.push({
        file,
        line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1,
        member,
        text: node.getText(sf),
        functions: enclosingFunctions(node),
      });
    // The checker is asked only about references spelled with a member's name (it is the slow part).
    const named = (text: string) => (NAME_MEMBERS as readonly string[]).includes(text);
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node)) {
        if (named(node.name.text) && isArenaNameMember(checker.getSymbolAtLocation(node.name), arenaFile)) hit(node, node.name.text);
      } else if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) {
        const name = node.argumentExpression.text;
        if (named(name) && isArenaNameMember(checker.getTypeAtLocation(node.expression).getProperty(name), arenaFile)) hit(node, name);
      } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const key = node.propertyName ?? node.name;
        if ((ts.isIdentifier(key) || ts.isStringLiteralLike(key)) && named(key.text)) {
          if (isArenaNameMember(checker.getTypeAtLocation(node.parent).getProperty(key.text), arenaFile)) hit(node, key.text);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/** Is this look-up inside a function of LOOKUP_ALLOWED (by file and name)? */
export function isAllowed(l: ArenaLookup): boolean {
  return LOOKUP_ALLOWED.some((a) => a.file === l.file && l.functions.includes(a.fn));
}

/** The look-ups outside the allowed functions, as `file:line: text (member)` lines. */
export function violations(lookups: readonly ArenaLookup[]): string[] {
  return lookups
    .filter((l) => !isAllowed(l))
    .map((l) => `${l.file}:${l.line}: ${l.text} (a string arena look-up: name the tensor in a layout function and read its field)`);
}
