/**
 * PostgreSQL's schema is behind this version: `cdapi migrate` first. A module of its own, so
 * the CLI can recognise it without loading the migrations.
 */
export class SchemaOutdatedError extends Error {}
