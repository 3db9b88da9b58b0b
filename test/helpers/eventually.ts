/**
 * Polls until `condition` holds, for what a test waits on in the background (a write the
 * service makes after answering, a server coming back); the deadline only keeps a broken build
 * from hanging, and failing it fails the test with `what`.
 */
export async function eventually(
  condition: () => Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`never happened within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
