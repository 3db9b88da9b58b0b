import { after } from 'node:test';

/**
 * Loaded into every test file's process by `npm test` (`--import`). A file whose tests have
 * all ended but which something it started (a timer, a socket, a pool) keeps alive would hold
 * the run until CI is killed; this ends such a file a minute after its tests with exit code 1,
 * which the runner reports as that file's failure, naming the file.
 *
 * Not `--test-force-exit`: with files in processes of their own, it exits a file before the
 * file's last results reach the runner (nodejs/node#64833), so tests ran, passed or not, and
 * were left out of the summary while the run still passed (runs of the same suite counted
 * 1,580 and 1,589 tests: the second left out the contract checker's last 9).
 */
const GRACE_MS = 60_000;

// Only in a test file's own process: the runner's process (which loads it too) runs no tests.
if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    setTimeout(() => {
      process.stderr.write(
        `${process.argv[1]}: still running ${GRACE_MS / 1000} s after its tests ended; something it started holds the event loop\n`,
      );
      process.exit(1);
    }, GRACE_MS).unref();
  });
}
