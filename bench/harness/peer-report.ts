import { table } from '../../src/cli/context.ts';
import { statuses } from './cold.ts';
import type { PeerRun, Side } from './peer.ts';

/** The peer part's report: per number of connections, each class on both sides. */

const ms = (value: number) => value.toFixed(1);
const perSecond = (value: number) => value.toFixed(1);
const rate = (side: Side) => perSecond(side.requestsPerSecond);

const us = (value: number) => value.toFixed(0);

/**
 * Per class, what one request cost each party in CPU on both sides, beside 3 × the peer's
 * rate and the ceiling: the rate at which the cores are spent by the service's PostgreSQL
 * statements and the load generator alone, so a service that cost nothing could go no faster.
 * Null when no side was measured (off Linux).
 */
function cpuTable(phase: PeerRun['phases'][number]): string | null {
  const rows = phase.comparisons.flatMap((c) => {
    const ours = c.service.cpu;
    const theirs = c.peer.cpu;
    if (!ours || !theirs) return [];
    return [
      [
        c.class === 'all' ? 'all comparable' : c.class,
        us(ours.serverUs),
        us(ours.postgresUs),
        us(ours.generatorUs),
        us(theirs.serverUs),
        us(theirs.postgresUs),
        us(theirs.generatorUs),
        perSecond(3 * c.peer.requestsPerSecond),
        perSecond(ours.ceiling),
      ],
    ];
  });
  if (rows.length === 0) return null;
  return [
    'CPU µs per request (server, PostgreSQL, load generator) on each side; ceiling: the req/s at which',
    "the service's PostgreSQL and load generator alone take every core, so no service could go faster here",
    table(
      [
        'class',
        'service',
        'its PG',
        'its load',
        'peer',
        'its PG',
        'its load',
        '3 × peer req/s',
        'ceiling req/s',
      ],
      rows,
    ),
  ].join('\n');
}

/** Answers other than 200, or '' when there was none. */
function notOk(side: Side): string {
  const text = statuses(side);
  return text === '-' ? '' : text;
}

export function formatPeer(engine: string, run: PeerRun): string {
  const sections = [
    `${engine}: the peer, ${run.peer.package} ${run.peer.version} (Node.js ${run.peer.node}) on the same tables, ` +
      `against the service (Node.js ${process.version}, response cache off), both with ${run.peer.poolSize} connections to PostgreSQL: ` +
      `the same requests, translated; each class alone, the service and the peer one after the other, ${run.durationSeconds} s each`,
    `checked first: ${run.checks.length} requests, the same ids in the same order and the same totals from both`,
  ];
  for (const phase of run.phases) {
    const rows = phase.comparisons.map((c) => [
      c.class === 'all' ? 'all comparable' : c.class,
      c.left > 0 ? `${c.requests} (${c.left} left out)` : c.requests,
      rate(c.service),
      ms(c.service.latencyMs.p50),
      ms(c.service.latencyMs.p99),
      rate(c.peer),
      ms(c.peer.latencyMs.p50),
      ms(c.peer.latencyMs.p99),
      `${c.ratio.toFixed(2)}x`,
      [notOk(c.service) && `service ${notOk(c.service)}`, notOk(c.peer) && `peer ${notOk(c.peer)}`]
        .filter(Boolean)
        .join(', ') || '-',
    ]);
    for (const entry of run.notComparable) {
      if (!phase.comparisons.some((c) => c.class === entry.class)) {
        rows.push([entry.class, entry.requests, 'not comparable', '', '', '', '', '', '', '']);
      }
    }
    const repeated = phase.comparisons
      .filter((c) => c.service.repeated > 0 || c.peer.repeated > 0)
      .map((c) => `${c.class} (service ${c.service.repeated}, peer ${c.peer.repeated})`);
    const cpu = cpuTable(phase);
    sections.push(
      [
        `${phase.connections} connections`,
        table(
          [
            'class',
            'URLs',
            'service req/s',
            'p50 ms',
            'p99 ms',
            'peer req/s',
            'p50 ms',
            'p99 ms',
            'service÷peer',
            'not 200',
          ],
          rows,
        ),
        ...(repeated.length > 0
          ? [`sent again after running out of distinct URLs: ${repeated.join(', ')}`]
          : []),
        ...(cpu ? ['', cpu] : []),
      ].join('\n'),
    );
  }
  const left = run.notComparable.map(
    (entry) => `${entry.class} (${entry.requests}): ${entry.reason}`,
  );
  if (left.length > 0) sections.push(`left out of the comparison:\n  ${left.join('\n  ')}`);
  return sections.join('\n\n');
}
