import { canaries } from './records.ts';

/** Buffers in a log line (pino writes them as byte arrays) as text, so a search sees them. */
const readable = (logged: string): string =>
  logged.replace(/\{"type":"Buffer","data":\[([\d,]*)\]\}/g, (_, bytes: string) =>
    JSON.stringify(Buffer.from(bytes.split(',').map(Number)).toString('latin1')),
  );

/** What a log holds that it never may: any of `secrets`, any canary of a sensitive field. */
export function leaksIn(
  logged: string,
  secrets: Iterable<string>,
): { secrets: string[]; canaries: string[] } {
  const text = readable(logged);
  return {
    secrets: [...secrets].filter((secret) => text.includes(secret)),
    canaries: canaries(text),
  };
}

export const NO_LEAKS = { secrets: [], canaries: [] };
