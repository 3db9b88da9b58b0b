#!/usr/bin/env node
// node:sqlite, which the mirror is written with, is there from Node 22.13.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `cdapi-pull: Node.js 22.13 or later is required (this is ${process.version})\n`,
  );
  process.exit(1);
}

// Node 22 calls node:sqlite experimental and warns on every run: noise for a user of the mirror.
const emitWarning = process.emitWarning;
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  if (String(warning).includes('SQLite')) return;
  (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
}) as typeof process.emitWarning;

// Output piped to a reader that stopped early (`cdapi-pull … | head -1`): the rest is dropped,
// and the pull runs to its end and exits with its own code, not of an unhandled EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

const [{ main }, { onInterrupt }] = await Promise.all([import('./main.ts'), import('./pull.ts')]);

// Ctrl-C, or SIGTERM from a service manager or a CI timeout: end the bar's line first. A page is
// written synchronously, so the signal is handled between transactions, never inside one; the
// next run resumes after the last page written. A first run interrupted before its first page
// leaves no file.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    if (process.stderr.isTTY) process.stderr.write('\n');
    for (const tidy of onInterrupt) tidy();
    process.stderr.write(
      `cdapi-pull: interrupted by ${signal}: the next run goes on from the last page written\n`,
    );
    process.exit(code);
  });
}

process.exitCode = await main(process.argv.slice(2), process.env, process.stdout, process.stderr);
