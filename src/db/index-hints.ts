import {
  AliasNode,
  IdentifierNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  RawNode,
  type RootOperationNode,
  SelectQueryNode,
  type UnknownRow,
} from 'kysely';

/**
 * SQLite's `INDEXED BY`: the list queries know which index a page, a count or a set of
 * anchors must be read through, and SQLite's planner, weighing an `ORDER BY … LIMIT` with a
 * range on another column, guessed wrong in both directions (a year of leaves in id order
 * gathered and sorted for every anchor, 42 times over; named employees read through a date
 * index). Applied to the query's first table (`from leaves as l`); PostgreSQL has no hints and
 * chooses well from its statistics, so the plugin leaves its queries alone.
 */
class IndexedBy implements KyselyPlugin {
  private readonly index: string;

  constructor(index: string) {
    this.index = index;
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (!SelectQueryNode.is(node) || !node.from) return node;
    const [first, ...rest] = node.from.froms;
    if (!first || !AliasNode.is(first) || !IdentifierNode.is(first.alias)) return node;
    const alias = first.alias.name.replaceAll('"', '""');
    const index = this.index.replaceAll('"', '""');
    // The alias is written out raw so that the hint can follow it: `"leaves" as "l" indexed by "…"`.
    const hinted = AliasNode.create(
      first.node,
      RawNode.createWithSql(`"${alias}" indexed by "${index}"`),
    );
    return { ...node, from: { ...node.from, froms: [hinted, ...rest] } };
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

/** The query read through `index` on SQLite; unchanged on PostgreSQL. */
export function indexedBy<Q extends { withPlugin(plugin: KyselyPlugin): Q }>(
  query: Q,
  index: string,
  sqlite: boolean,
): Q {
  return sqlite ? query.withPlugin(new IndexedBy(index)) : query;
}
