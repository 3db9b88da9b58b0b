import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { text } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stopOnInterrupt } from './interrupt.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The real CLI, as an operator runs it from a checkout (tsx compiles the sources at start-up). */
const CLI = `${ROOT}bin/cdapi.js`;
/**
 * The service as a production host runs it: compiled by `npm run build`, without tsx, whose
 * loader thread and compiler would add 35 MB at rest and up to 90 MB under load to what the
 * benchmark reports as the service's memory.
 */
const BUILT_CLI = `${ROOT}dist/cli/main.js`;
const GNU_TIME = '/usr/bin/time';
const SERVICE_START_TIMEOUT_MS = 60_000;

const execFileAsync = promisify(execFile);

/** Runs `cdapi ARGS` to completion and returns its stdout; a failure carries cdapi's message. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await execFileAsync(process.execPath, [CLI, ...args], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`cdapi ${args.join(' ')} failed: ${stderr || (error as Error).message}`);
  }
}

/** `npm run build`: compiles the sources to dist/ for `startService`. */
export async function buildService(): Promise<void> {
  const tsc = `${ROOT}node_modules/typescript/bin/tsc`;
  try {
    await execFileAsync(process.execPath, [tsc, '-p', `${ROOT}tsconfig.build.json`]);
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout?.trim();
    throw new Error(`npm run build failed: ${stdout || (error as Error).message}`);
  }
}

/** Bytes in whole MiB (2^20 bytes), for a table whose column names the unit. */
export const wholeMebibytes = (bytes: number) => Math.round(bytes / 2 ** 20);

/**
 * Memory, and the size of a file beside it, as the reports print them: whole MiB, the unit the
 * kernel counts a process's memory in (`VmRSS` and `time -v` give KiB), labelled so.
 */
export const mebibytes = (bytes: number | null) =>
  bytes === null ? 'n/a' : `${wholeMebibytes(bytes)} MiB`;

/** Resident set size of a process from /proc, or null once it is gone (or off Linux). */
function readRssBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Polls a process's VmRSS; the peak is only as good as the interval, so say which was used.
 * `onSample` hears every reading (the soak keeps them as a time series).
 */
export class RssSampler {
  private peak: number | null = null;
  private windowPeak: number | null = null;
  private readonly timer: NodeJS.Timeout;

  private readonly pid: number;
  readonly intervalMs: number;
  private readonly onSample?: (rssBytes: number) => void;

  constructor(pid: number, intervalMs: number, onSample?: (rssBytes: number) => void) {
    this.pid = pid;
    this.intervalMs = intervalMs;
    this.onSample = onSample;
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs).unref();
  }

  get peakBytes(): number | null {
    return this.peak;
  }

  /** The peak since the previous call (or the start): one scenario's share. */
  takeWindowPeak(): number | null {
    this.sample();
    const peak = this.windowPeak;
    this.windowPeak = null;
    return peak;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const rss = readRssBytes(this.pid);
    if (rss === null) return;
    this.peak = Math.max(this.peak ?? 0, rss);
    this.windowPeak = Math.max(this.windowPeak ?? 0, rss);
    this.onSample?.(rss);
  }
}

export interface MeasuredRun {
  stdout: string;
  /** The command's own stderr (GNU time's report taken off). */
  stderr: string;
  seconds: number;
  peakRssBytes: number | null;
  /** How the peak was measured. */
  rssSource: string;
}

async function waitForExit(child: ChildProcess): Promise<number | null> {
  const [code] = (await once(child, 'close')) as [number | null];
  return code;
}

/**
 * Runs the built `cdapi ARGS` (after `buildService`), as a production host runs it, and
 * measures its wall time and peak RSS. GNU time reads the kernel's high-water mark (exact);
 * without it, VmRSS is polled every 100 ms (can miss short peaks). From a checkout, tsx adds a
 * loader thread to the process and another to the import's writer thread.
 */
export async function runCliMeasured(args: string[], env: NodeJS.ProcessEnv): Promise<MeasuredRun> {
  const useGnuTime = existsSync(GNU_TIME);
  const started = performance.now();
  const child = useGnuTime
    ? spawn(GNU_TIME, ['-v', process.execPath, BUILT_CLI, ...args], { env, detached: true })
    : spawn(process.execPath, [BUILT_CLI, ...args], { env });
  stopOnInterrupt(child, { group: useGnuTime });
  const sampler = useGnuTime || child.pid === undefined ? null : new RssSampler(child.pid, 100);
  const [stdout, stderr, code] = await Promise.all([
    text(child.stdout),
    text(child.stderr),
    waitForExit(child),
  ]);
  const seconds = (performance.now() - started) / 1000;
  sampler?.stop();
  // GNU time appends its report to the command's own stderr.
  const reportStart = stderr.search(/^\s*Command (?:being timed|exited)/m);
  const cliStderr = reportStart === -1 ? stderr : stderr.slice(0, reportStart);
  const timeReport = reportStart === -1 ? '' : stderr.slice(reportStart);
  if (code !== 0) throw new Error(`cdapi ${args.join(' ')} failed: ${cliStderr.trim()}`);
  if (sampler) {
    return {
      stdout,
      stderr: cliStderr,
      seconds,
      peakRssBytes: sampler.peakBytes,
      rssSource: 'VmRSS every 100 ms',
    };
  }
  const maxRssKb = /Maximum resident set size \(kbytes\): (\d+)/.exec(timeReport)?.[1];
  return {
    stdout,
    stderr: cliStderr,
    seconds,
    peakRssBytes: maxRssKb === undefined ? null : Number(maxRssKb) * 1024,
    rssSource: `${GNU_TIME} -v`,
  };
}

export interface Service {
  /** `http://127.0.0.1:PORT/api/company/v1`, as the service printed it. */
  readonly baseUrl: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * With `BENCH_CPU_PROFILE_DIR` set, each service the harness starts writes V8 CPU profiles
 * there when it stops, one for the event loop and one for each SQLite reader thread (for Chrome
 * DevTools or any profile viewer): where the service's own time went under the load the phase
 * measured. The profiler costs a few percent of throughput, so profiled runs' figures are not
 * the headline.
 */
function cpuProfileOptions(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/**
 * Starts the built `cdapi serve` (see `buildService`) in its own process and resolves once it
 * prints "listening on URL". Its output goes to our stderr so warnings stay visible without
 * mixing into the tables. `cdapi serve` gives itself production's memory settings
 * (`--max-semi-space-size=4`, `MALLOC_ARENA_MAX=2`: src/heap.ts), so it is started plainly,
 * as an operator would.
 */
export function startService(env: NodeJS.ProcessEnv): Promise<Service> {
  return startListening(
    process.execPath,
    [...cpuProfileOptions(), BUILT_CLI, 'serve'],
    env,
    'the service',
  );
}

/**
 * Starts `command ARGS` as a server in its own process and resolves once it prints "listening
 * on URL" on stderr; every other line, and its stdout, go to our stderr.
 */
export async function startListening(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  name: string,
): Promise<Service> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  stopOnInterrupt(child);
  child.stdout.pipe(process.stderr);
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`${name} did not start within ${SERVICE_START_TIMEOUT_MS / 1000} s`));
    }, SERVICE_START_TIMEOUT_MS);
    createInterface({ input: child.stderr }).on('line', (line) => {
      const url = /listening on (\S+)/.exec(line)?.[1];
      if (url === undefined) {
        process.stderr.write(`${line}\n`);
        return;
      }
      clearTimeout(timer);
      resolve(url);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${name} could not start: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${signal ?? `code ${code}`}) before listening`));
    });
  });
  return {
    baseUrl,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
