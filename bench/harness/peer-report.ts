import { table } from '../../src/cli/context.ts';
import { statuses } from './cold.ts';
import type { PeerRun, Side } from './peer.ts';

/** The peer part's report: per number of connections, each class on both sides. */

const ms = (value: number) => value.toFixed(1);
const rate = (side: Side) => side.requestsPerSecond.toFixed(1);

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
      ].join('\n'),
    );
  }
  const left = run.notComparable.map(
    (entry) => `${entry.class} (${entry.requests}): ${entry.reason}`,
  );
  if (left.length > 0) sections.push(`left out of the comparison:\n  ${left.join('\n  ')}`);
  return sections.join('\n\n');
}
