import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface Environment {
  node: string;
  platform: string;
  cpuModel: string;
  cores: number;
  totalMemoryBytes: number;
  /** Load averages when the run started: the machine may be shared. */
  loadAverage: number[];
  gitCommit: string | null;
  /** Tracked files differed from the commit, so the commit alone does not say what ran. */
  gitDirty: boolean | null;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

export function describeEnvironment(): Environment {
  const status = git(['status', '--porcelain', '--untracked-files=no']);
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    totalMemoryBytes: os.totalmem(),
    loadAverage: os.loadavg(),
    gitCommit: git(['rev-parse', 'HEAD'])?.trim() ?? null,
    gitDirty: status === null ? null : status.trim() !== '',
  };
}
