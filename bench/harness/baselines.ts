import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { type LoadResult, type LoadSettings, runLoad } from './load.ts';

const SERVER = fileURLToPath(new URL('./baseline-server.ts', import.meta.url));

export interface BaselineResults {
  /** (a) bytes serialized once: what a response cache could at best reach. */
  prebuilt: LoadResult;
  /** (b) JSON.stringify per request: what a handler building its answer could at best reach. */
  stringify: LoadResult;
}

function waitForPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) =>
      reject(new Error(`the baseline server exited (code ${code}) before listening`)),
    );
  });
}

async function checkedLoad(url: string, settings: LoadSettings): Promise<LoadResult> {
  // The same single warm-up request each service scenario gets.
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`baseline ${url} answered ${response.status}`);
  await response.arrayBuffer();
  return runLoad({ url, paths: [new URL(url).pathname], headers: {} }, settings);
}

/** Runs both baselines against a bare node:http server answering `page`. */
export async function runBaselines(
  page: unknown,
  settings: LoadSettings,
): Promise<BaselineResults> {
  const child = fork(SERVER, { execArgv: ['--import', 'tsx'] });
  try {
    child.send(page as object);
    const origin = `http://127.0.0.1:${await waitForPort(child)}`;
    return {
      prebuilt: await checkedLoad(`${origin}/prebuilt`, settings),
      stringify: await checkedLoad(`${origin}/stringify`, settings),
    };
  } finally {
    if (child.connected) {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    }
  }
}
