import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/** How `rawRequest` sends: `halfClose` ends the client's side once the request is sent (a TCP FIN). */
interface RawOptions {
  timeoutMs?: number;
  halfClose?: boolean;
}

/**
 * Sends bytes exactly as given (no client-side encoding or validation, unlike fetch or
 * http.request) on a new connection and reads one response until the server closes it.
 * Resolves null when the server closes the connection without answering.
 */
export async function rawRequest(
  port: number,
  request: string | Buffer,
  options: RawOptions = {},
): Promise<RawResponse | null> {
  return parseResponse(await rawExchange(port, request, options));
}

/**
 * The status of every answer in `text` (`rawRequestText`), in order. A body need not end in a
 * line break, so the next answer may follow it on the same line.
 */
export const statusesIn = (text: string): string[] =>
  [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1] as string);

/** `rawRequest`, with every byte the server sent until it closed, as Latin-1 text. */
export async function rawRequestText(port: number, request: string | Buffer): Promise<string> {
  return (await rawExchange(port, request)).toString('latin1');
}

function rawExchange(
  port: number,
  request: string | Buffer,
  options: RawOptions = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(options.timeoutMs ?? 10_000, () =>
      socket.destroy(new Error('no answer: the server kept the connection open')),
    );
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may answer and close before it has read everything we sent (a 431, say).
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') socket.destroy();
      else reject(error);
    });
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    if (options.halfClose) socket.end(request);
    else socket.write(request);
  });
}

/** A GET request line and headers, `Connection: close`, with nothing encoded or checked. */
export function rawGet(target: string, headers: Array<[string, string]> = []): string {
  const lines = [`GET ${target} HTTP/1.1`, 'Host: localhost', 'Connection: close'];
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function parseResponse(bytes: Buffer): RawResponse | null {
  if (bytes.length === 0) return null;
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1)
    throw new Error(`not an HTTP response: ${bytes.toString('latin1').slice(0, 200)}`);
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1];
  if (!status) throw new Error(`not an HTTP status line: ${statusLine}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  return { status: Number(status), headers, body: body.toString('utf8') };
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
